const encoder = new TextEncoder();

function hexToBytes(hex: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

function bytesOf(body: string | ArrayBuffer | ArrayBufferView): Uint8Array<ArrayBuffer> {
  if (typeof body === 'string') return encoder.encode(body);
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  const copy = new Uint8Array(body.byteLength);
  copy.set(new Uint8Array(body.buffer, body.byteOffset, body.byteLength));
  return copy;
}

/**
 * Whether a webhook request is Postline's: `X-SVC-Signature` is `sha256=` and the hex
 * HMAC-SHA256 of the raw body keyed with the hook's secret (docs/webhooks.md). Pass the bytes
 * as received (not re-serialised JSON). Web Crypto's HMAC verify compares in constant time,
 * and it runs in Node 22+, browsers, Deno and workers alike. During a secret rotation pass
 * both secrets: either one verifies.
 */
export async function verifyWebhook(
  rawBody: string | ArrayBuffer | ArrayBufferView, signatureHeader: string | null | undefined, secret: string | readonly string[],
): Promise<boolean> {
  const m = /^sha256=([0-9a-f]{64})$/.exec(signatureHeader?.trim() ?? '');
  if (!m) return false;
  const signature = hexToBytes(m[1]);
  const data = bytesOf(rawBody);
  for (const s of typeof secret === 'string' ? [secret] : secret) {
    if (!s) continue;
    const key = await crypto.subtle.importKey('raw', encoder.encode(s), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
    if (await crypto.subtle.verify('HMAC', key, signature, data)) return true;
  }
  return false;
}
