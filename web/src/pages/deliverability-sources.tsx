import type { Answer } from '../api';
import { Empty, When } from '../components/state';

type Sources = Answer<'listSendingSources'>;
type Source = Sources['data'][number];
type Warmup = NonNullable<Source['warmup']>;

/** What a person sees of the forward-confirmed reverse DNS check made when Postline started. */
function DnsCheck({ s }: { s: Source }) {
  if (!s.dns) return <span className="badge badge-pending">Not checked yet</span>;
  if (s.dns.ok) return <span className="badge badge-verified">DNS ok</span>;
  return (
    <div className="warnings" role="alert" data-testid="source-dns-warning">
      <strong>DNS needs fixing: receivers may distrust mail from {s.address}.</strong>
      <p className="wrap">{s.dns.warning}</p>
      <p className="muted">
        {s.ehlo} resolves to {s.dns.forward.length ? s.dns.forward.join(', ') : 'nothing'}; {s.address} points back to{' '}
        {s.dns.reverse.length ? s.dns.reverse.join(', ') : 'no name'}. Checked <When at={s.dns.checkedAt} />.
      </p>
    </div>
  );
}

function WarmupProgress({ name, w }: { name: string; w: Warmup }) {
  if (w.day < 1) return <p>Warm-up starts <time dateTime={w.start}>{w.start}</time>; nothing leaves from it before.</p>;
  if (w.cap === null) return <p>Warmed up (the plan that started <time dateTime={w.start}>{w.start}</time> is over): no daily cap.</p>;
  const cap = w.cap;
  // Each provider counts against the cap on its own; before any mail today, one empty bar.
  const providers = w.providers.length ? w.providers : [{ name: 'each provider', sentToday: 0 }];
  return (
    <>
      <p>Day {w.day} of the warm-up: up to {cap.toLocaleString('en')} messages per provider today, {w.sentToday.toLocaleString('en')} sent.</p>
      <ul className="warmup-bars">
        {providers.map((p, i) => {
          const id = `warmup-${name}-${i}`;
          return (
            <li key={p.name}>
              <label htmlFor={id}>{p.name}: {p.sentToday.toLocaleString('en')} of {cap.toLocaleString('en')}</label>
              <progress id={id} max={cap} value={Math.min(p.sentToday, cap)}>{Math.round((100 * p.sentToday) / cap)}%</progress>
            </li>
          );
        })}
      </ul>
    </>
  );
}

/**
 * The addresses this account's mail leaves from (docs/sending-identity.md): for each, the pools
 * it serves, the DNS check made at start-up (a warning says what to fix) and its warm-up today.
 */
export function SendingSources({ sources }: { sources: Sources }) {
  if (sources.data.length === 0) {
    return (
      <Empty>
        <p>No fixed sending addresses.</p>
        <p className="muted">
          This server's delivery policy names no source addresses, so mail leaves from whatever address the server's network picks. When the
          operator adds sources and pools, each address appears here with its DNS check and warm-up progress.
        </p>
      </Empty>
    );
  }
  return (
    <div className="sources" data-testid="sending-sources">
      <p className="muted">
        Your transactional mail leaves through the pool <strong>{sources.pools.transactional}</strong>, campaigns through{' '}
        <strong>{sources.pools.broadcast}</strong>.
      </p>
      {sources.data.map((s) => (
        <section key={s.name} className="card source" aria-labelledby={`source-${s.name}`} data-testid={`source-${s.name}`}>
          <h3 id={`source-${s.name}`}>{s.name} <span className="muted">· {s.address}</span></h3>
          <dl className="source-facts">
            <dt>EHLO name</dt><dd className="wrap">{s.ehlo}</dd>
            <dt>Pools</dt><dd>{s.pools.join(', ')}</dd>
          </dl>
          <DnsCheck s={s} />
          {s.warmup ? <WarmupProgress name={s.name} w={s.warmup} /> : <p className="muted">No warm-up plan: sends at the provider limits.</p>}
        </section>
      ))}
    </div>
  );
}
