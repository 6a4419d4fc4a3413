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
        {points.length === 1 && <Bars point={points[0]} series={series} yAt={yAt} innerW={innerW} />}
        {points.length > 1 && series.map((s) => (
          <polyline key={s.key} fill="none" stroke={s.color} strokeWidth="2" points={points.map((p, i) => `${xAt(i)},${yAt(Number(p[s.key]) || 0)}`).join(' ')} />
        ))}
      </svg>
      <figcaption className="legend">
        {series.map((s) => <span key={s.key}><i style={{ background: s.color }} aria-hidden="true" />{s.label}</span>)}
      </figcaption>
    </figure>
  );
}

/** One day (or hour) of data: a line through one point is a lone dot, so each series is a bar. */
function Bars({ point, series, yAt, innerW }: { point: Record<string, number | string>; series: Series[]; yAt: (v: number) => number; innerW: number }) {
  const slot = Math.min(48, innerW / (series.length * 2));
  const start = PAD.left + innerW / 2 - (slot * series.length) / 2;
  const base = yAt(0);
  return (
    <g data-testid="chart-bars">
      {series.map((s, i) => {
        const top = yAt(Number(point[s.key]) || 0);
        return <rect key={s.key} x={start + i * slot + slot * 0.1} y={top} width={slot * 0.8} height={Math.max(0, base - top)} fill={s.color} />;
      })}
    </g>
  );
}
