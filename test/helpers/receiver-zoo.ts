/**
 * A "receiver zoo": several real SMTP servers (smtp-server) on 127.0.0.x addresses, all on one
 * port (delivery connects to every MX on POSTLINE_MX_PORT), each behaving like one kind of
 * real receiver: slow, capping concurrent connections (421 4.7.0 Too many connections),
 * rate-limiting (421-4.7.28 past N per window), greylisting the first attempt, or throttling
 * for a while (421 … TSS04) and then accepting. Every server records what it accepted and
 * when, the most connections it had open at once, and every throttle reply it gave, so a test
 * proves from the receiver's side that no limit was exceeded.
 */
import { SMTPServer } from 'smtp-server';

export interface ZooBehaviour {
  /** Wait this long before answering each DATA. */
  delayMs?: number;
  /** Refuse a connection with 421 4.7.0 while this many are open already. */
  maxConnections?: number;
  /** Accept at most `n` messages in any `windowMs`; answer 421-4.7.28 past it. */
  rate?: { n: number; windowMs: number };
  /** Answer 451 4.7.1 Greylisted to each recipient's first attempt. */
  greylist?: boolean;
  /** From the first message on (or `throttleAfterMs` after it), answer 421 4.7.0 [TSS04] for this long, then accept. */
  throttleForMs?: number;
  throttleAfterMs?: number;
}

export interface ZooMx {
  address: string;
  /** Messages accepted, with when and the EHLO name of the client that sent them. */
  accepted: { to: string; at: number; helo: string }[];
  /** Throttle or refusal replies this server gave, with when and on which connection (smtp-server's session id). */
  refusals: { reply: string; at: number; session: string }[];
  greylisted: number;
  maxOpen: number;
  open: number;
  close(): Promise<void>;
}

export interface Zoo {
  port: number;
  mx: Record<string, ZooMx>;
  close(): Promise<void>;
}

function reply(code: number, message: string): Error & { responseCode: number } {
  return Object.assign(new Error(message), { responseCode: code });
}

function startOne(address: string, port: number, b: ZooBehaviour): Promise<{ mx: ZooMx; port: number }> {
  const mx: ZooMx = { address, accepted: [], refusals: [], greylisted: 0, maxOpen: 0, open: 0, close: async () => {} };
  const seen = new Set<string>();
  let throttleStart: number | null = null;
  const server = new SMTPServer({
    name: 'zoo.test',
    logger: false,
    hideENHANCEDSTATUSCODES: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    closeTimeout: 200,
    onConnect(session, callback) {
      if (b.maxConnections !== undefined && mx.open >= b.maxConnections) {
        mx.refusals.push({ reply: '421 4.7.0 Too many connections', at: Date.now(), session: session.id });
        return callback(reply(421, '4.7.0 Too many connections'));
      }
      (session as { counted?: boolean }).counted = true;
      mx.open++;
      mx.maxOpen = Math.max(mx.maxOpen, mx.open);
      callback();
    },
    onClose(session) {
      if ((session as { counted?: boolean }).counted) mx.open--;
    },
    onRcptTo(addr, session, callback) {
      const now = Date.now();
      const to = addr.address.toLowerCase();
      if (b.throttleForMs !== undefined) {
        throttleStart ??= now + (b.throttleAfterMs ?? 0);
        if (now >= throttleStart && now - throttleStart < b.throttleForMs) {
          mx.refusals.push({ reply: '421 TSS04', at: now, session: session.id });
          return callback(reply(421, '4.7.0 [TSS04] Messages from 127.0.0.1 temporarily deferred due to unexpected volume or user complaints'));
        }
      }
      if (b.greylist && !seen.has(to)) {
        seen.add(to);
        mx.greylisted++;
        return callback(reply(451, '4.7.1 Greylisted, please try again later'));
      }
      if (b.rate) {
        const inWindow = mx.accepted.filter((a) => now - a.at < b.rate!.windowMs).length;
        if (inWindow >= b.rate.n) {
          mx.refusals.push({ reply: '421-4.7.28', at: now, session: session.id });
          return callback(reply(421, '4.7.28 Our system has detected an unusual rate of unsolicited mail originating from your IP address.'));
        }
      }
      callback();
    },
    onData(stream, session, callback) {
      stream.on('data', () => {});
      stream.on('end', () => {
        const done = () => {
          for (const r of session.envelope.rcptTo) mx.accepted.push({ to: r.address.toLowerCase(), at: Date.now(), helo: session.hostNameAppearsAs });
          callback(null);
        };
        if (b.delayMs) setTimeout(done, b.delayMs);
        else done();
      });
    },
  });
  server.on('error', () => {});
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, address, () => {
      mx.close = () => new Promise<void>((r) => server.close(() => r()));
      resolve({ mx, port: (server.server.address() as { port: number }).port });
    });
  });
}

/** Starts one server per behaviour, on 127.0.0.2, .3, … and one shared port. */
export async function startZoo(behaviours: Record<string, ZooBehaviour>): Promise<Zoo> {
  const names = Object.keys(behaviours);
  for (let tries = 0; tries < 10; tries++) {
    const started: ZooMx[] = [];
    try {
      const first = await startOne('127.0.0.2', 0, behaviours[names[0]]);
      started.push(first.mx);
      for (let i = 1; i < names.length; i++) started.push((await startOne(`127.0.0.${i + 2}`, first.port, behaviours[names[i]])).mx);
      const mx = Object.fromEntries(names.map((n, i) => [n, started[i]]));
      return { port: first.port, mx, close: async () => void (await Promise.all(started.map((m) => m.close()))) };
    } catch {
      // The port was taken on another address: start over on a new one.
      await Promise.all(started.map((m) => m.close()));
    }
  }
  throw new Error('no port free on every zoo address');
}

/** The most messages a server accepted within any `windowMs`. */
export function peakInWindow(times: number[], windowMs: number): number {
  const t = [...times].sort((a, b) => a - b);
  let peak = 0;
  for (let i = 0, j = 0; i < t.length; i++) {
    while (t[i] - t[j] >= windowMs) j++;
    peak = Math.max(peak, i - j + 1);
  }
  return peak;
}
