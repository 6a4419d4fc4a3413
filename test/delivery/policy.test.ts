import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config.js';
import { destinationFor, globMatches, parseDuration, parsePolicy, PolicyError, SHIPPED_POLICY } from '../../src/delivery-policy.js';
import { readReply } from '../../src/delivery/replies.js';
import { classifySmtpReply } from '../../src/mail/classify.js';

test('policy: durations', () => {
  assert.equal(parseDuration('10s'), 10_000);
  assert.equal(parseDuration('5m'), 300_000);
  assert.equal(parseDuration('1h'), 3_600_000);
  assert.equal(parseDuration('250ms'), 250);
  for (const bad of ['', '10', 's', '-1s', '0s', '1 week', '1y']) assert.equal(parseDuration(bad), null, bad);
});

test('policy: MX globs and the shipped providers; anything else rolls up by its MX host set', () => {
  assert.ok(globMatches('*.google.com', 'aspmx.l.google.com'));
  assert.ok(globMatches('*.google.com', 'ALT1.ASPMX.L.GOOGLE.COM.'));
  assert.ok(!globMatches('*.google.com', 'google.com'));
  assert.ok(!globMatches('*.google.com', 'google.com.evil.test'));
  const p = SHIPPED_POLICY;
  assert.equal(destinationFor(p, ['aspmx.l.google.com', 'alt1.aspmx.l.google.com']).key, 'gmail');
  assert.equal(destinationFor(p, ['example-com.mail.protection.outlook.com']).key, 'microsoft');
  assert.equal(destinationFor(p, ['mta5.am0.yahoodns.net']).key, 'yahoo');
  assert.equal(destinationFor(p, ['mx01.mail.icloud.com']).key, 'icloud');
  // Two domains at one host share a destination (and the default block's limits), in any order.
  const a = destinationFor(p, ['mx2.hoster.test', 'mx1.hoster.test']);
  const b = destinationFor(p, ['MX1.hoster.test.', 'mx2.hoster.test']);
  assert.equal(a.key, 'mx:mx1.hoster.test,mx2.hoster.test');
  assert.equal(a.key, b.key);
  assert.equal(a.policy.name, 'default');
  assert.equal(a.source, '');
});

test('policy: given providers replace shipped ones of the same name and add others; default and relay blocks override', () => {
  const p = parsePolicy({
    default: { maxConnections: 3, greylistRetry: '2m' },
    relay: { messagesPerMinute: 840, messagesPerDay: 50_000 },
    providers: [
      { name: 'gmail', mx: ['*.google.com'], maxConnections: 5, onReply: [{ match: '4.7.28', suspend: '1m' }] },
      { name: 'hoster', mx: ['*.hoster.test'], messagesPerMinute: 60 },
    ],
  });
  const gmail = p.providers.find((x) => x.name === 'gmail')!;
  assert.equal(gmail.maxConnections, 5);
  assert.equal(gmail.messagesPerMinute, null, 'a replaced provider starts from the default block, not the shipped one');
  assert.deepEqual(gmail.onReply, [{ match: '4.7.28', suspendMs: 60_000 }]);
  assert.equal(gmail.greylistRetryMs, 120_000);
  assert.equal(p.providers.filter((x) => x.name === 'gmail').length, 1);
  assert.ok(p.providers.some((x) => x.name === 'yahoo'), 'shipped providers not named stay');
  assert.equal(destinationFor(p, ['mx.hoster.test']).key, 'hoster');
  assert.equal(p.default.maxConnections, 3);
  assert.equal(p.relay.messagesPerDay, 50_000);
  assert.equal(p.relay.messagesPerMinute, 840);
});

test('policy: a bad document names the key', () => {
  const cases: [unknown, string][] = [
    [[], '(root)'],
    [{ defaults: {} }, 'defaults'],
    [{ default: { maxConnections: 0 } }, 'default.maxConnections'],
    [{ default: { maxConnections: 1.5 } }, 'default.maxConnections'],
    [{ default: { greylistRetry: '5 minutes' } }, 'default.greylistRetry'],
    [{ default: { messagesPerDay: 10 } }, 'default.messagesPerDay'],
    [{ providers: {} }, 'providers'],
    [{ providers: [{ mx: ['*.x.test'] }] }, 'providers[0].name'],
    [{ providers: [{ name: 'x', mx: [] }] }, 'providers[0].mx'],
    [{ providers: [{ name: 'x', mx: ['*.x.test'], onReply: [{ match: '4.7.28', suspend: 'soon' }] }] }, 'providers[0].onReply[0].suspend'],
    [{ providers: [{ name: 'x', mx: ['*.x.test'], onReply: [{ match: '' , suspend: '1m' }] }] }, 'providers[0].onReply[0].match'],
    [{ providers: [{ name: 'x', mx: ['*.x.test'], speed: 1 }] }, 'providers[0].speed'],
    [{ providers: [{ name: 'x', mx: ['*.x.test'] }, { name: 'x', mx: ['*.y.test'] }] }, 'providers[1].name'],
    [{ relay: { mx: ['*.x.test'] } }, 'relay.mx'],
  ];
  for (const [doc, key] of cases) {
    assert.throws(() => parsePolicy(doc), (err: unknown) => err instanceof PolicyError && err.key === key && err.message.includes(key), JSON.stringify(doc));
  }
});

test('policy: POSTLINE_DELIVERY_POLICY with a bad file stops start-up naming the key; a good one is loaded', () => {
  const dir = mkdtempSync(join(tmpdir(), 'postline-policy-'));
  const env = { POSTLINE_DATA_DIR: dir, POSTLINE_SECRET: 'test-secret-0123456789abcdef', POSTLINE_FBL_SECRET: 'fbl_test-secret-0123456789' };
  const bad = join(dir, 'bad.json');
  writeFileSync(bad, JSON.stringify({ providers: [{ name: 'gmail', mx: ['*.google.com'], messagesPerMinute: -5 }] }));
  assert.throws(() => loadConfig({ ...env, POSTLINE_DELIVERY_POLICY: bad }), (err: unknown) => err instanceof ConfigError && /POSTLINE_DELIVERY_POLICY: providers\[0\]\.messagesPerMinute/.test(err.message));
  const broken = join(dir, 'broken.json');
  writeFileSync(broken, '{ "default": ');
  assert.throws(() => loadConfig({ ...env, POSTLINE_DELIVERY_POLICY: broken }), /not valid JSON/);
  assert.throws(() => loadConfig({ ...env, POSTLINE_DELIVERY_POLICY: join(dir, 'missing.json') }), /cannot read/);
  const good = join(dir, 'good.json');
  writeFileSync(good, JSON.stringify({ default: { maxConnections: 4 } }));
  assert.equal(loadConfig({ ...env, POSTLINE_DELIVERY_POLICY: good }).deliveryPolicy.default.maxConnections, 4);
  assert.equal(loadConfig(env).deliveryPolicy, SHIPPED_POLICY);
});

test('replies: the providers\' throttle replies match their rules; greylisting is told apart; a bounce is not a throttle', () => {
  const p = SHIPPED_POLICY;
  const gmail = p.providers.find((x) => x.name === 'gmail')!;
  const ms = p.providers.find((x) => x.name === 'microsoft')!;
  const yahoo = p.providers.find((x) => x.name === 'yahoo')!;
  const ask = (policy: typeof gmail, code: number, text: string) => readReply(classifySmtpReply(code, `${code} ${text}`, 'mx'), policy);
  assert.deepEqual(ask(gmail, 421, '4.7.28 [203.0.113.5] Our system has detected an unusual rate of unsolicited mail'), { kind: 'throttle', rule: { match: '4.7.28', suspendMs: 900_000 } });
  assert.equal(ask(ms, 451, '4.7.650 The mail server [203.0.113.5] has been temporarily rate limited due to IP reputation')?.kind, 'throttle');
  assert.equal(ask(yahoo, 421, '4.7.0 [TSS04] Messages from 203.0.113.5 temporarily deferred due to unexpected volume or user complaints')?.kind, 'throttle');
  assert.equal(ask(p.default, 421, '4.7.0 Too many connections from your IP')?.kind, 'throttle');
  assert.equal(ask(p.relay, 454, 'Throttling failure: Maximum sending rate exceeded.')?.kind, 'throttle');
  assert.equal(ask(p.default, 451, '4.7.1 Greylisted, please try again later')?.kind, 'greylist');
  assert.equal(ask(p.default, 450, '4.2.0 Mailbox busy')?.kind, 'greylist');
  assert.equal(ask(p.default, 450, 'Greylisting in action')?.kind, 'greylist');
  assert.equal(ask(p.default, 451, '4.3.0 Temporary failure'), null);
  assert.equal(ask(gmail, 550, '5.1.1 The email account that you tried to reach does not exist'), null);
  // 4.7.28 inside a longer code is not 4.7.28.
  assert.equal(ask(gmail, 421, '4.7.280 something else'), null);
});
