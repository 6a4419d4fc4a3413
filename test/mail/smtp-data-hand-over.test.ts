import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createConnection, createServer, type Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import { writeMessageData, type DataPath } from '../../src/mail/smtp-data/hand-over.js';
import { SmtpSession } from '../../src/mail/smtp-session.js';
import { startSmtpMx, type TestSmtpMx } from '../helpers/smtp-mx.js';

// The message reaches SMTPConnection's DATA stream in wire form (src/mail/smtp-data/): these
// tests fail if nodemailer stops handing that stream over as hand-over.ts expects, and prove
// that the bytes on the wire, the end of the data and nodemailer's byte counts are what
// nodemailer's own stuffing gives (docs/decisions/0044-smtp-data-in-wire-form.md).

const MESSAGES = [
  'From: a@example.com\r\nSubject: plain\r\n\r\nHello.\r\n',
  'Subject: dots\r\n\r\n.\r\n..\r\n.leading\r\nend',
  '.first byte a dot\r\n',
  'Subject: bare\nline ends\r\rmixed\r.dot after CR\n.dot after LF\r',
  'Subject: 8-bit\r\n\r\nGr\u00fc\u00dfe \u65e5\u672c\r\n\n',
  '',
].map((m) => Buffer.from(m, 'utf8'));

const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function mx(): Promise<TestSmtpMx> {
  const server = await startSmtpMx({ starttls: false });
  cleanups.push(() => server.close());
  return server;
}

/** A TCP relay in front of `port` that records every byte the client sends. */
async function recordingRelay(port: number): Promise<{ port: number; sent: () => Buffer }> {
  const chunks: Buffer[] = [];
  const sockets: Socket[] = [];
  const relay = createServer((client) => {
    const upstream = createConnection(port, '127.0.0.1');
    sockets.push(client, upstream);
    client.on('data', (c: Buffer) => chunks.push(c));
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => (sockets.forEach((s) => s.destroy()), relay.close(() => r()))));
  return { port: (relay.address() as { port: number }).port, sent: () => Buffer.concat(chunks) };
}

function connect(port: number): Promise<SMTPConnection> {
  const connection = new SMTPConnection({ host: '127.0.0.1', port, name: 'out.postline.test', ignoreTLS: true });
  cleanups.push(() => connection.close());
  return new Promise((resolve, reject) => connection.connect((err) => (err ? reject(err) : resolve(connection))));
}

type Info = { messageSize: number; response: string };
function send(connection: SMTPConnection, message: unknown): Promise<Info> {
  return new Promise((resolve, reject) =>
    connection.send({ from: 'b@example.com', to: ['r@example.org'] }, message as Buffer, (err, info) => (err ? reject(err) : resolve(info as unknown as Info))),
  );
}

function quit(connection: SMTPConnection): Promise<void> {
  return new Promise((resolve) => {
    connection.once('end', () => resolve());
    connection.quit();
  });
}

test("SMTPConnection still hands its fresh DataStream to the message's pipe(), and takes the wire form through it with nodemailer's byte counts", async () => {
  const server = await mx();
  const ours = await connect(server.port);
  const theirs = await connect(server.port);
  for (const raw of MESSAGES) {
    let path: DataPath | null = null;
    const viaWireForm = await send(ours, { pipe: (stream: PassThrough) => (path = writeMessageData(stream, raw)) });
    assert.equal(path, 'wire-form', 'nodemailer no longer hands over a DataStream hand-over.ts recognises');
    const viaNodemailer = await send(theirs, raw);
    assert.match(viaWireForm.response, /^250/);
    assert.equal(viaWireForm.messageSize, viaNodemailer.messageSize, 'the wire bytes nodemailer counts');
  }
  const received = await server.waitForMessages(MESSAGES.length * 2);
  for (let i = 0; i < MESSAGES.length; i++) {
    assert.ok(received[2 * i].raw.equals(received[2 * i + 1].raw), `message ${i} arrived as nodemailer's own stuffing delivers it`);
  }
});

test('the bytes a session puts on the wire are those of nodemailer stuffing the message itself, commands and terminators included', async () => {
  const server = await mx();
  const ourRelay = await recordingRelay(server.port);
  const theirRelay = await recordingRelay(server.port);

  const session = new SmtpSession({ host: '127.0.0.1', port: ourRelay.port, name: 'out.postline.test', ignoreTLS: true });
  for (const raw of MESSAGES) {
    const outcome = await session.send('b@example.com', 'r@example.org', raw);
    assert.equal(outcome.dataPath, 'wire-form');
  }
  const ended = new Promise<void>((r) => (session as unknown as { connection: SMTPConnection }).connection.once('end', () => r()));
  session.quit();
  await ended;

  const theirs = await connect(theirRelay.port);
  for (const raw of MESSAGES) await send(theirs, raw);
  await quit(theirs);

  const ourBytes = ourRelay.sent();
  const theirBytes = theirRelay.sent();
  assert.ok(ourBytes.includes('\r\n.\r\nQUIT\r\n'), 'the recording covers the whole session');
  assert.equal(ourBytes.toString('latin1'), theirBytes.toString('latin1'));
});

test('a stream hand-over.ts does not recognise gets the raw message, for nodemailer to stuff (never stuffed twice)', async () => {
  const raw = Buffer.from('.a\r\nb\n');
  const plain = new PassThrough();
  const got: Buffer[] = [];
  plain.on('data', (c: Buffer) => got.push(c));
  assert.equal(writeMessageData(plain, raw), 'nodemailer');
  await new Promise((r) => plain.on('end', r));
  assert.ok(Buffer.concat(got).equals(raw));
});
