import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** An event item as a receiver sees it. */
export interface WebhookEvent {
  id: string;
  type: string;
  email: string;
  messageId: string | null;
  url?: string;
  occurredAt: string;
  data: Record<string, unknown>;
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The exact bytes received, as a signature check must see them. */
  rawBody: Buffer;
  /** When the last byte arrived (Date.now()). */
  receivedAt: number;
  json(): { hookId: string; events: WebhookEvent[] };
}

/** How to answer one request. Default: 200 with an empty body. */
export interface ScriptedResponse {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Milliseconds to wait before answering. */
  delayMs?: number;
  /** Destroy the socket instead of answering (a receiver that crashes mid-request). */
  close?: boolean;
}

export interface WebhookReceiver {
  /** http://127.0.0.1:<port> */
  origin: string;
  /** `origin` + '/hook' */
  url: string;
  requests: ReceivedRequest[];
  /** Answers for the next requests, in order; after they are used up, `fallback` answers. */
  enqueue(...responses: ScriptedResponse[]): void;
  /** The answer once the queue is empty (a function sees the request). */
  fallback: ScriptedResponse | ((req: ReceivedRequest) => ScriptedResponse);
  /** Resolves once at least `count` requests have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  /** Events of every answered-2xx request, in arrival order. */
  deliveredEvents(): WebhookEvent[];
  close(): Promise<void>;
}

/**
 * A real HTTP server on loopback that records every request's raw body and headers and answers
 * as scripted: status, delay, or a closed socket. Tests register `after(() => r.close())`.
 * `port` starts it on a known port (a receiver that comes back up after being down).
 */
export async function startWebhookReceiver(opts: { port?: number } = {}): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const answered = new Map<ReceivedRequest, number>();
  const queue: ScriptedResponse[] = [];
  const sockets = new Set<Socket>();
  let waiters: Array<() => void> = [];

  const receiver: WebhookReceiver = {
    origin: '',
    url: '',
    requests,
    fallback: {},
    enqueue: (...r) => void queue.push(...r),
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < count) {
        if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${count} webhook requests, got ${requests.length}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
    },
    deliveredEvents() {
      return requests.filter((r) => (answered.get(r) ?? 0) < 300).flatMap((r) => r.json().events);
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      const record: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        rawBody,
        receivedAt: Date.now(),
        json: () => JSON.parse(rawBody.toString('utf8')),
      };
      const script = queue.shift() ?? (typeof receiver.fallback === 'function' ? receiver.fallback(record) : receiver.fallback);
      answered.set(record, script.close ? 999 : (script.status ?? 200));
      requests.push(record);
      const w = waiters;
      waiters = [];
      w.forEach((f) => f());
      const respond = () => {
        if (script.close) {
          req.socket.destroy();
          return;
        }
        res.writeHead(script.status ?? 200, script.headers ?? {});
        res.end(script.body ?? '');
      };
      if (script.delayMs) setTimeout(respond, script.delayMs);
      else respond();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  receiver.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.url = `${receiver.origin}/hook`;
  return receiver;
}
