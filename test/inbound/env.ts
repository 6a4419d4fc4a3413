import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { basicEmail, RECIPIENT_DOMAIN, type MailEnv } from '../helpers/mail-env.js';

/** The real samples in test/fixtures, as bytes. */
export const fixture = (name: string): string => readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');

export interface SentMessage {
  id: string;
  to: string;
  /** The VERP return path it left with (MAIL FROM at the MX). */
  verp: string;
}

/** Sends one real message through the API and the delivery engine to the test MX. */
export async function sendReal(env: MailEnv, local: string): Promise<SentMessage> {
  const to = `${local}@${RECIPIENT_DOMAIN}`;
  const res = await env.send(basicEmail({ to }));
  assert.equal(res.statusCode, 202, res.body);
  const { id } = res.json();
  await env.deliverAll();
  const received = env.mx.messages.find((m) => m.envelope.to.includes(to) && m.raw.toString().includes(id));
  assert.ok(received, `message ${id} reached the MX`);
  return { id, to, verp: received.envelope.from };
}

/**
 * A fixture turned into a report about `msg`: the sample's msg_0190aaaa… id becomes the real
 * id, its VERP-like return path (bounces+<id>@example.com, untagged) the real signed VERP, and
 * the sample recipients named in `addresses` the real recipient.
 */
export function aboutMessage(sample: string, msg: SentMessage, addresses: string[] = []): string {
  let out = sample.replace(/bounces\+msg_0190aaaa[0-9a-f]{24}@example\.com/g, msg.verp).replace(/msg_0190aaaa[0-9a-f]{24}/g, msg.id);
  for (const a of addresses) out = out.replaceAll(a, msg.to);
  return out;
}

export async function emailOf(env: MailEnv, id: string): Promise<{ status: string; events: { type: string; email: string; data: Record<string, unknown> }[] }> {
  const res = await env.app.inject({ url: `/api/v1/emails/${id}`, headers: env.acme.live });
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}

export async function suppressionOf(env: MailEnv, email: string): Promise<{ suppressed: boolean; reason: string | null }> {
  return (await env.app.inject({ url: `/api/v1/suppression?email=${encodeURIComponent(email)}`, headers: env.acme.live })).json();
}

export const typesOf = (events: { type: string }[]) => events.map((e) => e.type);
