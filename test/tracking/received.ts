/**
 * Reading tracking links out of mail the test MX received, and following them over HTTP the
 * way a recipient's client would (full URL → Host header + path).
 */
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { Parser } from 'htmlparser2';
import { simpleParser } from 'mailparser';
import type { MailEnv } from '../helpers/mail-env.js';

export interface ReceivedMail {
  raw: Buffer;
  html: string;
  text: string;
  /** `a`/`area` hrefs in document order. */
  hrefs: string[];
  /** `img` srcs in document order. */
  images: string[];
  /** Unfolded header values by lower-case name. */
  headers: Map<string, string>;
  /** The URL and mailto of List-Unsubscribe. */
  listUnsubscribe: { url: string; mailto: string };
}

export function linksOf(html: string): { hrefs: string[]; images: string[] } {
  const hrefs: string[] = [];
  const images: string[] = [];
  new Parser(
    {
      onopentag(name, attrs) {
        if ((name === 'a' || name === 'area') && attrs.href !== undefined) hrefs.push(attrs.href);
        if (name === 'img' && attrs.src !== undefined) images.push(attrs.src);
      },
    },
    { decodeEntities: true },
  ).end(html);
  return { hrefs, images };
}

/** The message delivered to `to` (waits until the MX has it), parsed. */
export async function receivedBy(env: MailEnv, to: string): Promise<ReceivedMail> {
  const deadline = Date.now() + 10_000;
  let got = env.mx.messages.find((m) => m.envelope.to.some((r) => r.toLowerCase() === to.toLowerCase()));
  while (!got && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    got = env.mx.messages.find((m) => m.envelope.to.some((r) => r.toLowerCase() === to.toLowerCase()));
  }
  assert.ok(got, `no message for ${to} at the MX`);
  const parsed = await simpleParser(got.raw);
  const html = typeof parsed.html === 'string' ? parsed.html : '';
  const headers = new Map(parsed.headerLines.map((h) => [h.key, h.line.slice(h.line.indexOf(':') + 1).replace(/\r?\n[ \t]+/g, ' ').trim()]));
  const lu = headers.get('list-unsubscribe') ?? '';
  const parts = [...lu.matchAll(/<([^>]+)>/g)].map((m) => m[1]);
  return {
    raw: got.raw,
    html,
    text: parsed.text ?? '',
    ...linksOf(html),
    headers,
    listUnsubscribe: { url: parts.find((p) => /^https?:/.test(p)) ?? '', mailto: parts.find((p) => p.startsWith('mailto:')) ?? '' },
  };
}

/** Sends one email with the live key and delivers everything due; returns the message id. */
export async function sendAndDeliver(env: MailEnv, body: Record<string, unknown>, engine = env.engine): Promise<string> {
  const res = await env.send(body);
  assert.equal(res.statusCode, 202, res.body);
  await env.deliverAll(engine);
  return res.json().id;
}

/** Requests an absolute tracking URL from the app: its host becomes the Host header. */
export function follow(
  app: FastifyInstance,
  url: string,
  opts: { method?: 'GET' | 'POST' | 'HEAD'; headers?: Record<string, string>; payload?: string | Buffer } = {},
) {
  const u = new URL(url);
  return app.inject({ method: opts.method ?? 'GET', url: u.pathname + u.search, headers: { host: u.host, ...opts.headers }, payload: opts.payload });
}

export const tokenOf = (url: string): string => new URL(url).pathname.split('/').pop()!;

/** The message's events as the API shows them. */
export async function eventsOf(env: MailEnv, id: string): Promise<{ type: string; email: string; url?: string; data: Record<string, unknown> }[]> {
  const res = await env.app.inject({ url: `/api/v1/emails/${id}`, headers: env.acme.live });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().events;
}
