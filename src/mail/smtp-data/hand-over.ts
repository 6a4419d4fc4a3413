/**
 * Hands a message to the DATA stream nodemailer's SMTPConnection creates for it, already in
 * wire form (wire-form.ts), so the stream only passes it on: nodemailer keeps everything else
 * about the transaction (piping into the socket, the end-of-data reply, LMTP, logging, the
 * byte counts it reports). docs/decisions/0044-smtp-data-in-wire-form.md.
 *
 * SMTPConnection.send() gives a message that has a pipe() method its DataStream (a Transform
 * whose per-byte _transform dot-stuffs and whose _flush writes the terminator). This replaces
 * those two on that one instance: the one place Postline reaches into nodemailer's internals.
 * The stream is recognised by its shape (a fresh Transform with DataStream's counters); if a
 * nodemailer release hands over something else, the raw message is written to it as before
 * and nodemailer's own stuffing runs — slower, never wrong. test/mail/smtp-data-hand-over.test.ts
 * fails when that happens, so the fallback never goes unnoticed.
 */
import { Transform, type TransformCallback, type Writable } from 'node:stream';
import { toDataWire } from './wire-form.js';
import { dataWireMadeWith } from './made-with-message.js';

/** What DataStream adds to a Transform (nodemailer/lib/smtp-connection/data-stream). */
interface DataStreamShape extends Transform {
  inByteCount: number;
  outByteCount: number;
  lastByte: number | false;
}

/** Who turned the message into wire form: this module, or nodemailer's DataStream. */
export type DataPath = 'wire-form' | 'nodemailer';

/** Writes `raw` to the DATA stream SMTPConnection handed over (in wire form when it is a fresh DataStream, raw otherwise), and ends it. */
export function writeMessageData(stream: Writable, raw: Buffer): DataPath {
  if (!isFreshDataStream(stream)) {
    stream.end(raw);
    return 'nodemailer';
  }
  // The build step makes most messages' wire form with them (made-with-message.ts).
  const wire = dataWireMadeWith(raw) ?? toDataWire(raw);
  // The counts nodemailer reports (info.messageSize, its log line): source and wire bytes.
  stream._transform = (chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) => {
    stream.inByteCount += raw.length;
    stream.outByteCount += chunk.length;
    done(null, chunk);
  };
  // The terminator is part of `wire`: one write carries the message and its end.
  stream._flush = (done: TransformCallback) => done();
  stream.end(wire);
  return 'wire-form';
}

function isFreshDataStream(stream: Writable): stream is DataStreamShape {
  const s = stream as Partial<DataStreamShape>;
  return (
    stream instanceof Transform &&
    s.inByteCount === 0 &&
    s.outByteCount === 0 &&
    s.lastByte === false &&
    typeof s._transform === 'function' &&
    typeof s._flush === 'function' &&
    !stream.writableEnded &&
    stream.writableLength === 0
  );
}
