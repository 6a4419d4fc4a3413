/** A small dependency-free SVG line chart: a charting library would cost more first-load JS than the whole app. */

export interface Series { key: string; label: string; color: string }

const W = 640;
const H = 200;
const PAD = { left: 40, right: 8, top: 8, bottom: 22 };

export function LineChart({ points, series, xLabel, title }: {
  points: ({ x: string } & Record<string, number | string>)[];
  series: Series[];
  xLabel: (x: string) => string;
  title: string;
}) {
  const max = Math.max(1, ...points.flatMap((p) => series.map((s) => Number(p[s.key]) || 0)));
  const innerW = W - PAD.left - PAD.right;
  const innerH = H - PAD.top - PAD.bottom;
  const xAt = (i: number) => PAD.left + (points.length <= 1 ? innerW / 2 : (i * innerW) / (points.length - 1));
  const yAt = (v: number) => PAD.top + innerH - (v / max) * innerH;
  const summary = series.map((s) => `${s.label} ${points.reduce((n, p) => n + (Number(p[s.key]) || 0), 0)}`).join(', ');
  const ticks = points.length <= 1 ? [0] : [0, Math.floor((points.length - 1) / 2), points.length - 1];
  return (
    <figure className="chart-box">
      <svg className="chart" viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${title}: ${summary}`}>
        <line x1={PAD.left} y1={PAD.top + innerH} x2={W - PAD.right} y2={PAD.top + innerH} stroke="#d9dde3" />
        <text x={PAD.left - 4} y={PAD.top + 8} textAnchor="end" fontSize="11" fill="#5a6270">{max}</text>
        <text x={PAD.left - 4} y={PAD.top + innerH} textAnchor="end" fontSize="11" fill="#5a6270">0</text>
        {ticks.map((i) => points[i] && (
          <text key={i} x={xAt(i)} y={H - 6} textAnchor={i === 0 && points.length > 1 ? 'start' : i === points.length - 1 && points.length > 1 ? 'end' : 'middle'} fontSize="11" fill="#5a6270">{xLabel(points[i].x)}</text>
        ))}
        {series.map((s) => points.length === 1
          ? <circle key={s.key} cx={xAt(0)} cy={yAt(Number(points[0][s.key]) || 0)} r="3" fill={s.color} />
          : <polyline key={s.key} fill="none" stroke={s.color} strokeWidth="2" points={points.map((p, i) => `${xAt(i)},${yAt(Number(p[s.key]) || 0)}`).join(' ')} />)}
      </svg>
      <figcaption className="legend">
        {series.map((s) => <span key={s.key}><i style={{ background: s.color }} aria-hidden="true" />{s.label}</span>)}
      </figcaption>
    </figure>
  );
}
