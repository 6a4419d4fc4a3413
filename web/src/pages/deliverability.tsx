import { useEffect } from 'react';
import { get, type Answer } from '../api';
import { Empty, Show, When, useLoad } from '../components/state';
import { SendingSources } from './deliverability-sources';

type Status = Answer<'getDeliveryStatus'>;
type Sources = Answer<'listSendingSources'>;
type Destination = Status['data'][number];

const REFRESH_MS = 5_000;

function limitText(d: Destination): string {
  const perMinute = d.limits.messagesPerMinute === null ? 'no per-minute limit' : `${d.limits.messagesPerMinute} / min`;
  return `${d.limits.maxConnections} connections · ${perMinute} · ${d.limits.messagesPerConnection} per connection`;
}

/** The column's name inside the cell, shown only at a phone's width where the table header is hidden. */
function CellLabel({ children }: { children: string }) {
  return <span className="cell-label">{children}: </span>;
}

function State({ d }: { d: Destination }) {
  if (d.suspendedUntil) {
    return (
      <>
        <span className="badge badge-suspended">Suspended until <When at={d.suspendedUntil} /></span>
        {d.lastThrottleReply && <p className="wrap muted throttle-reply">Receiver said: <q>{d.lastThrottleReply}</q></p>}
      </>
    );
  }
  if (d.rateFactor < 1) return <span className="badge badge-slowed" title={d.lastThrottleReply ?? undefined}>Sending at {Math.round(d.rateFactor * 100)} % after a throttle</span>;
  return <span className="badge badge-active">Sending</span>;
}

/**
 * Traffic shaping now, for the whole deployment (docs/delivery-policy.md): connections, messages in
 * flight and sent per provider or MX host set, the limits, and suspensions after a throttle reply;
 * then the addresses this account's mail leaves from, with their DNS check and warm-up.
 */
export default function DeliverabilityPage() {
  const status = useLoad(() => get<Status>('/delivery/status'), []);
  const sources = useLoad(() => get<Sources>('/deliverability/sources'), []);
  const { reload } = status;
  const reloadSources = sources.reload;
  useEffect(() => {
    const timer = setInterval(() => {
      reload();
      reloadSources();
    }, REFRESH_MS);
    return () => clearInterval(timer);
  }, [reload, reloadSources]);
  return (
    <>
      <h1>Deliverability</h1>
      <p className="muted">
        How Postline paces mail to each mailbox provider, shared by every account on this server. Refreshed every {REFRESH_MS / 1000} seconds.
      </p>
      <Show loaded={status}>
        {(s) => s.data.length === 0 ? (
          <Empty>
            <p>No delivery in the last hour.</p>
            <p className="muted">
              Once mail goes out, each provider (Gmail, Microsoft, Yahoo, …) or other receiving mail server appears here with its open connections,
              messages in flight and sent in the last minute, and the limits Postline keeps to. When a provider asks us to slow down, it shows as
              “Suspended until …” with the provider’s reply.
            </p>
          </Empty>
        ) : (
          <table className="delivery-status" data-testid="delivery-status">
            <caption className="muted">As of <When at={s.generatedAt} /></caption>
            <thead>
              <tr>
                <th scope="col">Destination</th>
                <th scope="col">State</th>
                <th scope="col">Connections</th>
                <th scope="col">In flight</th>
                <th scope="col">Sent last minute</th>
                <th scope="col">Limits</th>
              </tr>
            </thead>
            <tbody>
              {s.data.map((d) => (
                <tr key={`${d.name}\u0000${d.source}`}>
                  <th scope="row" className="wrap">
                    {d.name}
                    {d.name !== d.provider && <span className="muted"> ({d.provider})</span>}
                    {d.source && <span className="muted"> · {d.source}</span>}
                  </th>
                  <td className="wrap state"><State d={d} /></td>
                  <td><CellLabel>Connections</CellLabel>{d.connections} of {d.limits.maxConnections}</td>
                  <td><CellLabel>In flight</CellLabel>{d.inFlight}</td>
                  <td><CellLabel>Sent last minute</CellLabel>{d.sentLastMinute}</td>
                  <td className="wrap"><CellLabel>Limits</CellLabel>{limitText(d)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Show>
      <h2 id="sources-h">Sending addresses</h2>
      <Show loaded={sources}>{(s) => <SendingSources sources={s} />}</Show>
    </>
  );
}
