/**
 * A message's DATA wire form made with the message itself. The build step has the signed
 * message as one string before it becomes bytes; when every line break in it is CRLF, no line
 * starts with a dot and it ends with CRLF, its wire form (wire-form.ts: stuffing, CRLF
 * normalisation, terminator) is the message followed by `.` CRLF. Then one buffer holds both:
 * the message is a view of it without the last three bytes, and the hand-over (hand-over.ts)
 * sends the whole buffer instead of scanning the message again (toDataWire: ~30 µs for an 11 KB
 * message). docs/decisions/0050-build-step-from-written-strings.md; test/mail/dkim-written.test.ts
 * compares every such wire form with toDataWire's.
 */

const CR = 0x0d;
const LF = 0x0a;

/** Wire forms by the message buffer they were made with (a message dropped takes its wire form with it). */
const wireForms = new WeakMap<Buffer, Buffer>();

/** Every CR followed by LF and every LF preceded by CR; no line (nor the message) starts with a dot; ends with CRLF. */
function isWireReady(message: string): boolean {
  if (!message.endsWith('\r\n') || message.charCodeAt(0) === 0x2e || message.includes('\r\n.')) return false;
  for (let cr = message.indexOf('\r'); cr !== -1; cr = message.indexOf('\r', cr + 1)) {
    if (message.charCodeAt(cr + 1) !== LF) return false;
  }
  for (let lf = message.indexOf('\n'); lf !== -1; lf = message.indexOf('\n', lf + 1)) {
    if (lf === 0 || message.charCodeAt(lf - 1) !== CR) return false;
  }
  return true;
}

/** `message` in UTF-8; its wire form made in the same buffer when it needs nothing but the terminator. */
export function messageWithDataWire(message: string): Buffer {
  if (!isWireReady(message)) return Buffer.from(message, 'utf8');
  const wire = Buffer.from(`${message}.\r\n`, 'utf8');
  const raw = wire.subarray(0, wire.length - 3);
  wireForms.set(raw, wire);
  return raw;
}

/** The wire form messageWithDataWire made with `raw`, if it made one. */
export function dataWireMadeWith(raw: Buffer): Buffer | undefined {
  return wireForms.get(raw);
}
