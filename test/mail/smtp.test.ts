import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { Writable } from 'node:stream';
import { SmtpSender, type SmtpEnvelope } from '../../src/mail/smtp.js';
import { SmtpSession } from '../../src/mail/smtp-session.js';
import { startSmtpMx, type TestSmtpMx } from '../helpers/smtp-mx.js';

const raw = Buffer.from(
  'From: news@example.com\r\nTo: alice@example.org\r\nSubject: Hi\r\nMessage-ID: <msg_1@example.com>\r\n\r\nHello.\r\n',
);
const envelope = (to = 'alice@example.org'): SmtpEnvelope => ({ from: 'bounces+msg_1=abc@bounces.example.com', to });

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function mx(opts: Parameters<typeof startSmtpMx>[0] = {}): Promise<TestSmtpMx> {
  const server = await startSmtpMx(opts);
  cleanups.push(() => server.close());
  return server;
}

function sender(opts: Partial<ConstructorParameters<typeof SmtpSender>[0]> = {}): SmtpSender {
  const s = new SmtpSender({ heloName: 'out.postline.test', connectionTimeoutMs: 2000, greetingTimeoutMs: 2000, ...opts });
  cleanups.push(() => s.close());
  return s;
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

test('smtp: an accepted message is delivered over STARTTLS with the VERP envelope, bytes intact', async () => {
  const server = await mx();
  const result = await sender().send({ kind: 'mx', host: 'mx.example.org', address: '127.0.0.1', port: server.port }, envelope(), raw);
  assert.equal(result.kind, 'delivered');
  assert.equal(result.mx, 'mx.example.org');
  assert.match(result.response, /^250/);
  const [msg] = await server.waitForMessages(1);
  assert.deepEqual(msg.envelope, { from: 'bounces+msg_1=abc@bounces.example.com', to: ['alice@example.org'] });
  assert.equal(msg.tls, true);
  assert.ok(msg.raw.equals(raw), 'the MX received exactly the bytes we sent');
});

test('smtp: a 451 at RCPT is deferred with its codes', async () => {
  const server = await mx({ rule: () => 'defer' });
  const result = await sender().send({ kind: 'mx', host: 'mx.example.org', address: '127.0.0.1', port: server.port }, envelope(), raw);
  assert.equal(result.kind, 'deferred');
  assert.ok(result.kind === 'deferred');
  assert.equal(result.code, 451);
  assert.equal(result.enhanced, '4.3.0');
  assert.equal(result.hostFailure, false);
  assert.equal(server.messages.length, 0);
});

test('smtp: a 550 at RCPT is a hard bounce that is the recipient’s', async () => {
  const server = await mx({ rule: () => 'reject' });
  const result = await sender().send({ kind: 'mx', host: 'mx.example.org', address: '127.0.0.1', port: server.port }, envelope(), raw);
  assert.ok(result.kind === 'hard_bounce');
  assert.equal(result.code, 550);
  assert.equal(result.enhanced, '5.1.1');
  assert.equal(result.ourFault, false);
});

test('smtp: a custom 5.7.26 reply is a hard bounce that is ours', async () => {
  const server = await mx({ rule: () => ({ code: 550, message: '5.7.26 This mail is unauthenticated' }) });
  const result = await sender().send({ kind: 'mx', host: 'mx.example.org', address: '127.0.0.1', port: server.port }, envelope(), raw);
  assert.ok(result.kind === 'hard_bounce');
  assert.equal(result.ourFault, true);
});

test('smtp: two messages to one host travel over one connection', async () => {
  const server = await mx();
  const s = sender();
  const target = { kind: 'mx' as const, host: 'mx.example.org', address: '127.0.0.1', port: server.port };
  assert.equal((await s.send(target, envelope('a@example.org'), raw)).kind, 'delivered');
  assert.equal((await s.send(target, envelope('b@example.org'), raw)).kind, 'delivered');
  const msgs = await server.waitForMessages(2);
  assert.equal(server.connectionCount, 1);
  assert.equal(msgs[0].connectionId, msgs[1].connectionId);
});

test('smtp: a rejected recipient resets the session and the connection stays in use', async () => {
  const server = await mx({ rule: (rcpt) => (rcpt.startsWith('nobody') ? 'reject' : 'accept') });
  const s = sender({ maxConnectionsPerHost: 1 });
  const target = { kind: 'mx' as const, host: 'mx.example.org', address: '127.0.0.1', port: server.port };
  assert.equal((await s.send(target, envelope('a@example.org'), raw)).kind, 'delivered');
  assert.equal((await s.send(target, envelope('nobody@example.org'), raw)).kind, 'hard_bounce');
  assert.equal((await s.send(target, envelope('b@example.org'), raw)).kind, 'delivered');
  const msgs = await server.waitForMessages(2);
  assert.equal(server.connectionCount, 1);
  assert.equal(msgs[0].connectionId, msgs[1].connectionId);
});

test('smtp: concurrent sends to one host never open more than the per-host cap', async () => {
  const server = await mx();
  const s = sender({ maxConnectionsPerHost: 2 });
  const target = { kind: 'mx' as const, host: 'mx.example.org', address: '127.0.0.1', port: server.port };
  const results = await Promise.all(Array.from({ length: 6 }, (_, i) => s.send(target, envelope(`u${i}@example.org`), raw)));
  assert.deepEqual(results.map((r) => r.kind), Array(6).fill('delivered'));
  assert.ok(server.connectionCount <= 2, `opened ${server.connectionCount} connections`);
});

test('smtp: connection refused is deferred as a host failure', async () => {
  const port = await closedPort();
  const result = await sender().send({ kind: 'mx', host: 'mx.example.org', address: '127.0.0.1', port }, envelope(), raw);
  assert.ok(result.kind === 'deferred');
  assert.equal(result.hostFailure, true);
  assert.equal(result.code, null);
  assert.equal(result.enhanced, '4.4.1');
});

test('smtp: a server that refuses us at the greeting gives a bounce that is ours', async () => {
  const server = await mx({ connectRule: () => ({ code: 554, message: '5.7.1 Client host blocked using zen.spamhaus.org' }) });
  const result = await sender().send({ kind: 'mx', host: 'mx.example.org', address: '127.0.0.1', port: server.port }, envelope(), raw);
  assert.ok(result.kind === 'hard_bounce', JSON.stringify(result));
  assert.equal(result.ourFault, true);
});

test('smtp: delivery moves to the next MX host only when a host is unreachable', async () => {
  const server = await mx();
  // Every host is tried on the same port (as with POSTLINE_MX_PORT); nothing listens on
  // 127.0.0.2, so mx1 refuses the connection and mx2 (127.0.0.1) takes the message.
  const result = await sender().sendToMxHosts(
    [
      { exchange: 'mx1.example.org', priority: 10, addresses: ['127.0.0.2'] },
      { exchange: 'mx2.example.org', priority: 20, addresses: ['127.0.0.1'] },
    ],
    server.port,
    envelope(),
    raw,
  );
  assert.equal(result.kind, 'delivered');
  assert.equal(result.mx, 'mx2.example.org');
  assert.equal(server.messages.length, 1);
});

test('smtp: a 550 from the first MX is final, the next MX is not tried', async () => {
  const server = await mx({ rule: () => 'reject' });
  const result = await sender().sendToMxHosts(
    [{ exchange: 'mx1.example.org', priority: 10, addresses: ['127.0.0.1'] }, { exchange: 'mx2.example.org', priority: 20, addresses: ['127.0.0.1'] }],
    server.port,
    envelope(),
    raw,
  );
  assert.equal(result.kind, 'hard_bounce');
  assert.equal(server.connectionCount, 1);
});

test('smtp: relay mode authenticates with the URL credentials; bad credentials defer', async () => {
  const server = await mx({ auth: { user: 'postline', pass: 's3cret' } });
  const good = `smtp://postline:s3cret@127.0.0.1:${server.port}?tls.rejectUnauthorized=false`;
  const result = await sender().send({ kind: 'relay', url: good }, envelope(), raw);
  assert.equal(result.kind, 'delivered', JSON.stringify(result));
  assert.equal(result.mx, '127.0.0.1');
  assert.equal((await server.waitForMessages(1))[0].envelope.to[0], 'alice@example.org');

  const bad = `smtp://postline:wrong@127.0.0.1:${server.port}?tls.rejectUnauthorized=false`;
  assert.equal((await sender().send({ kind: 'relay', url: bad }, envelope(), raw)).kind, 'deferred');
});

/**
 * A bare SMTP server on a socket, for what smtp-server hides: the commands as they arrive (in
 * which reads), and connections dropped at chosen points. `onCommand` answers each command
 * line; it may return 'drop' to end the connection there.
 */
async function rawMx(onCommand: (line: string, conn: { id: number; messages: number }) => string | 'drop' | null): Promise<{ port: number; reads: { conn: number; text: string }[]; commands: { conn: number; line: string }[]; connections: () => number }> {
  const reads: { conn: number; text: string }[] = [];
  const commands: { conn: number; line: string }[] = [];
  let connections = 0;
  const server = createServer((socket) => {
    const conn = { id: ++connections, messages: 0 };
    let buffer = '';
    let recipients = 0;
    let inData = false;
    socket.on('error', () => {});
    socket.write('220 raw.test ESMTP\r\n');
    socket.on('data', (chunk) => {
      reads.push({ conn: conn.id, text: chunk.toString('latin1') });
      buffer += chunk.toString('latin1');
      for (;;) {
        if (inData) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end < 0) return;
          buffer = buffer.slice(end + 5);
          inData = false;
          conn.messages++;
          const reply = onCommand('<data>', conn);
          if (reply === 'drop') return void socket.destroy();
          socket.write(`${reply ?? '250 2.0.0 queued'}\r\n`);
          continue;
        }
        const eol = buffer.indexOf('\r\n');
        if (eol < 0) return;
        const line = buffer.slice(0, eol);
        buffer = buffer.slice(eol + 2);
        commands.push({ conn: conn.id, line });
        const verb = line.split(/[ :]/)[0].toUpperCase();
        const reply = onCommand(line, conn);
        if (reply === 'drop') return void socket.destroy();
        if (verb === 'RCPT' && reply === null) recipients++;
        if (verb === 'MAIL' || verb === 'RSET') recipients = 0;
        if (reply !== null) socket.write(`${reply}\r\n`);
        else if (verb === 'DATA' && recipients === 0) socket.write('503 5.5.1 no valid recipients\r\n');
        else if (verb === 'EHLO') socket.write('250-raw.test\r\n250-PIPELINING\r\n250 8BITMIME\r\n');
        else if (verb === 'DATA') {
          inData = true;
          socket.write('354 go ahead\r\n');
        } else if (verb === 'QUIT') {
          socket.end('221 bye\r\n');
          return;
        } else socket.write('250 OK\r\n');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
  return { port: (server.address() as { port: number }).port, reads, commands, connections: () => connections };
}

const rawTarget = (port: number) => ({ kind: 'mx' as const, host: 'raw.example.org', address: '127.0.0.1', port });
const verbs = (commands: { line: string }[]) => commands.map((c) => c.line.split(/[ :]/)[0].toUpperCase());

test('smtp: where PIPELINING is offered, MAIL, RCPT and DATA leave in one write; one connection carries a slot’s messages', async () => {
  const server = await rawMx(() => null);
  const s = sender();
  for (const to of ['a@example.org', 'b@example.org', 'c@example.org']) {
    assert.equal((await s.send(rawTarget(server.port), envelope(to), raw, { slot: 'dest:0' })).kind, 'delivered');
  }
  assert.equal(server.connections(), 1);
  const envelopes = server.reads.filter((r) => r.text.startsWith('MAIL FROM:'));
  assert.equal(envelopes.length, 3);
  for (const e of envelopes) assert.match(e.text, /^MAIL FROM:<[^>]+>\r\nRCPT TO:<[^>]+>\r\nDATA\r\n$/);
});

test('smtp: a message costs two socket writes on a reused connection: MAIL, RCPT and DATA together, then the message with its terminator', async () => {
  const server = await rawMx(() => null);
  const session = new SmtpSession({ host: '127.0.0.1', port: server.port, name: 'out.postline.test', ignoreTLS: true });
  cleanups.push(async () => session.discard());
  await session.send('b@example.com', 'a@example.org', raw);
  // Every write the socket makes goes through _write (one chunk) or _writev (a corked batch).
  const socket = (session as unknown as { connection: { _socket: Writable & { _writev?: unknown } } }).connection._socket;
  const writes: string[] = [];
  const write = socket._write.bind(socket);
  const writev = (socket._writev as typeof socket._write & ((chunks: { chunk: Buffer }[], cb: (err?: Error | null) => void) => void)).bind(socket);
  socket._write = (chunk: Buffer, encoding: BufferEncoding, cb: (err?: Error | null) => void) => {
    writes.push(chunk.toString('latin1'));
    write(chunk, encoding, cb);
  };
  socket._writev = (chunks: { chunk: Buffer }[], cb: (err?: Error | null) => void) => {
    writes.push(chunks.map((c) => c.chunk.toString('latin1')).join(''));
    writev(chunks, cb);
  };
  for (const to of ['b@example.org', 'c@example.org']) await session.send('b@example.com', to, raw);
  assert.deepEqual(writes, [
    'MAIL FROM:<b@example.com>\r\nRCPT TO:<b@example.org>\r\nDATA\r\n',
    raw.toString('latin1') + '.\r\n',
    'MAIL FROM:<b@example.com>\r\nRCPT TO:<c@example.org>\r\nDATA\r\n',
    raw.toString('latin1') + '.\r\n',
  ]);
});

test('smtp: after a refused transaction the session is reset (RSET) and the connection carries the next message', async () => {
  const server = await rawMx((line) => (/^RCPT TO:<nobody@/.test(line) ? '550 5.1.1 no such user' : null));
  const s = sender();
  const target = rawTarget(server.port);
  assert.equal((await s.send(target, envelope('nobody@example.org'), raw, { slot: 'd:0' })).kind, 'hard_bounce');
  assert.equal((await s.send(target, envelope('b@example.org'), raw, { slot: 'd:0' })).kind, 'delivered');
  assert.equal(server.connections(), 1);
  // The refused DATA of the pipelined batch is answered too; then RSET, then the next transaction.
  assert.deepEqual(verbs(server.commands), ['EHLO', 'MAIL', 'RCPT', 'DATA', 'RSET', 'MAIL', 'RCPT', 'DATA']);
});

test('smtp: a connection that fails mid-message is discarded, and the next message opens a new one', async () => {
  const server = await rawMx((line, conn) => (line === '<data>' && conn.id === 1 ? 'drop' : null));
  const s = sender();
  const target = rawTarget(server.port);
  const first = await s.send(target, envelope('a@example.org'), raw, { slot: 'd:0' });
  assert.ok(first.kind === 'deferred', JSON.stringify(first));
  assert.equal((await s.send(target, envelope('b@example.org'), raw, { slot: 'd:0' })).kind, 'delivered');
  assert.equal(server.connections(), 2);
});

test('smtp: a reused connection the server drops before the message leaves is tried once more on a fresh one', async () => {
  // The second MAIL FROM on connection 1 finds the server gone: nothing of the message left.
  const server = await rawMx((line, conn) => (line.startsWith('MAIL FROM') && conn.id === 1 && conn.messages === 1 ? 'drop' : null));
  const s = sender();
  const target = rawTarget(server.port);
  assert.equal((await s.send(target, envelope('a@example.org'), raw, { slot: 'd:0' })).kind, 'delivered');
  const second = await s.send(target, envelope('b@example.org'), raw, { slot: 'd:0' });
  assert.equal(second.kind, 'delivered', JSON.stringify(second));
  assert.equal(server.connections(), 2);
});

test('smtp: an idle connection says QUIT after the idle time; closeSlot ends a slot’s connection', async () => {
  const server = await rawMx(() => null);
  const s = sender({ idleTimeoutMs: 20 });
  assert.equal((await s.send(rawTarget(server.port), envelope('a@example.org'), raw)).kind, 'delivered');
  const quitSeen = async () => {
    for (let i = 0; i < 200 && !verbs(server.commands).includes('QUIT'); i++) await new Promise((r) => setTimeout(r, 10));
    return verbs(server.commands).filter((v) => v === 'QUIT').length;
  };
  assert.equal(await quitSeen(), 1);

  const slotted = sender();
  assert.equal((await slotted.send(rawTarget(server.port), envelope('b@example.org'), raw, { slot: 'd:1' })).kind, 'delivered');
  slotted.closeSlot('d:1');
  for (let i = 0; i < 200 && verbs(server.commands).filter((v) => v === 'QUIT').length < 2; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(verbs(server.commands).filter((v) => v === 'QUIT').length, 2);
});

test('smtp: closeSlot says when the server has answered the QUIT, and only then; a slot with no connection up never says so', async () => {
  const server = await rawMx(() => null);
  const s = sender();
  assert.equal((await s.send(rawTarget(server.port), envelope('c@example.org'), raw, { slot: 'd:2' })).kind, 'delivered');
  const quits = () => verbs(server.commands).filter((v) => v === 'QUIT').length;
  const before = quits();
  const gone = await new Promise<number>((resolve) => s.closeSlot('d:2', () => resolve(quits())));
  assert.equal(gone, before + 1, 'the server saw the QUIT before the slot was said gone');
  let called = false;
  s.closeSlot('d:never-used', () => (called = true));
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(called, false);
});

test('smtp: closing the sender settles the sends still waiting for a connection', async () => {
  const server = await mx({ dataDelayMs: 200 });
  const s = sender({ maxConnectionsPerHost: 1 });
  const target = { kind: 'mx' as const, host: 'mx.example.org', address: '127.0.0.1', port: server.port };
  const sends = ['a', 'b', 'c'].map((u) => s.send(target, envelope(`${u}@example.org`), raw));
  await server.waitForMessages(0);
  await s.close();
  const results = await Promise.all(sends);
  // The first was on the wire; the two waiting ones are not sent, and nothing hangs.
  assert.deepEqual(results.slice(1).map((r) => r.kind), ['deferred', 'deferred']);
});
