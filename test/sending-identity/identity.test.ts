import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config.js';
import { parseSendingIdentity, poolFor, SendingIdentityError } from '../../src/sending-identity.js';
import { compareSpf, spfRecordValue } from '../../src/domain/domains/records.js';
import { dnsTargetsOf } from '../../src/domain/domains/domains.js';
import { parsePolicy } from '../../src/delivery-policy.js';

const SOURCES = {
  tx1: { address: '203.0.113.10', ehlo: 'mta1.example.com' },
  bulk1: { address: '203.0.113.20', ehlo: 'mta2.example.com.' },
  new1: { address: '2001:db8::20', ehlo: 'MTA3.example.com', warmup: { start: '2026-12-01', daily: [50, 100, 200] }, overflow: 'spill' },
};
const POOLS = { transactional: ['tx1'], broadcast: ['bulk1', 'new1'], dedicated: ['new1'] };

describe('parseSendingIdentity', () => {
  test('sources in policy order with their EHLO names normalised, warm-up plans, overflow (wait by default), pools', () => {
    const identity = parseSendingIdentity({ sources: SOURCES, pools: POOLS });
    assert.deepEqual(identity, {
      sources: [
        { name: 'tx1', address: '203.0.113.10', ehlo: 'mta1.example.com', warmup: null, overflow: 'wait' },
        { name: 'bulk1', address: '203.0.113.20', ehlo: 'mta2.example.com', warmup: null, overflow: 'wait' },
        { name: 'new1', address: '2001:db8::20', ehlo: 'mta3.example.com', warmup: { start: '2026-12-01', daily: [50, 100, 200] }, overflow: 'spill' },
      ],
      pools: POOLS,
    });
  });

  test('no sources: nothing changes, mail leaves as before', () => {
    assert.deepEqual(parseSendingIdentity({}), { sources: [], pools: {} });
  });

  const bad: [string, object, string][] = [
    ['pools without sources', { pools: POOLS }, 'pools'],
    ['sources that are not an object', { sources: [], pools: POOLS }, 'sources'],
    ['an empty sources object', { sources: {}, pools: POOLS }, 'sources'],
    ['a source name in capitals', { sources: { TX1: SOURCES.tx1 }, pools: POOLS }, 'sources.TX1'],
    ['an address that is not an IP', { sources: { ...SOURCES, tx1: { address: 'mta1.example.com', ehlo: 'mta1.example.com' } }, pools: POOLS }, 'sources.tx1.address'],
    ['two sources on one address', { sources: { ...SOURCES, bulk1: { address: '203.0.113.10', ehlo: 'x.example.com' } }, pools: POOLS }, 'sources.bulk1.address'],
    ['an EHLO name that is not a host name', { sources: { ...SOURCES, tx1: { address: '203.0.113.10', ehlo: 'localhost' } }, pools: POOLS }, 'sources.tx1.ehlo'],
    ['an unknown source key', { sources: { ...SOURCES, tx1: { ...SOURCES.tx1, weight: 2 } }, pools: POOLS }, 'sources.tx1.weight'],
    ['overflow without warm-up', { sources: { ...SOURCES, tx1: { ...SOURCES.tx1, overflow: 'spill' } }, pools: POOLS }, 'sources.tx1.overflow'],
    ['an unknown overflow', { sources: { ...SOURCES, new1: { ...SOURCES.new1, overflow: 'drop' } }, pools: POOLS }, 'sources.new1.overflow'],
    ['a warm-up start that is no day', { sources: { ...SOURCES, new1: { ...SOURCES.new1, warmup: { start: '2026-02-30', daily: [1] } } }, pools: POOLS }, 'sources.new1.warmup.start'],
    ['an empty daily list', { sources: { ...SOURCES, new1: { ...SOURCES.new1, warmup: { start: '2026-12-01', daily: [] } } }, pools: POOLS }, 'sources.new1.warmup.daily'],
    ['a zero daily cap', { sources: { ...SOURCES, new1: { ...SOURCES.new1, warmup: { start: '2026-12-01', daily: [50, 0] } } }, pools: POOLS }, 'sources.new1.warmup.daily[1]'],
    ['a fractional daily cap', { sources: { ...SOURCES, new1: { ...SOURCES.new1, warmup: { start: '2026-12-01', daily: [1.5] } } }, pools: POOLS }, 'sources.new1.warmup.daily[0]'],
    ['sources without pools', { sources: SOURCES }, 'pools'],
    ['no broadcast pool', { sources: SOURCES, pools: { transactional: ['tx1'] } }, 'pools.broadcast'],
    ['a pool of an unknown source', { sources: SOURCES, pools: { ...POOLS, broadcast: ['bulk2'] } }, 'pools.broadcast[0]'],
    ['an empty pool', { sources: SOURCES, pools: { ...POOLS, dedicated: [] } }, 'pools.dedicated'],
    ['a pool naming a source twice', { sources: SOURCES, pools: { ...POOLS, dedicated: ['new1', 'new1'] } }, 'pools.dedicated'],
    ['a pool called default', { sources: SOURCES, pools: { ...POOLS, default: ['tx1'] } }, 'pools.default'],
  ];
  for (const [name, doc, key] of bad) {
    test(`refuses ${name}, naming ${key}`, () => {
      assert.throws(() => parseSendingIdentity(doc), (e: unknown) => e instanceof SendingIdentityError && e.key === key);
    });
  }

  test('a warm-up of 366 days is the longest', () => {
    const plan = (n: number) => ({ sources: { ...SOURCES, new1: { ...SOURCES.new1, warmup: { start: '2026-12-01', daily: Array(n).fill(10) } } }, pools: POOLS });
    assert.equal(parseSendingIdentity(plan(366)).sources[2].warmup!.daily.length, 366);
    assert.throws(() => parseSendingIdentity(plan(367)), /warmup\.daily/);
  });
});

describe('poolFor', () => {
  const identity = parseSendingIdentity({ sources: SOURCES, pools: POOLS });
  test("the stream's own pool unless the account has one; a pool gone from the policy falls back", () => {
    assert.equal(poolFor(identity, 'transactional', null), 'transactional');
    assert.equal(poolFor(identity, 'broadcast', null), 'broadcast');
    assert.equal(poolFor(identity, 'broadcast', 'dedicated'), 'dedicated');
    assert.equal(poolFor(identity, 'broadcast', 'removed'), 'broadcast');
  });
});

describe('configuration', () => {
  const dir = mkdtempSync(join(tmpdir(), 'postline-identity-'));
  const env = (policy: unknown) => {
    const path = join(dir, `${Math.random()}.json`);
    writeFileSync(path, typeof policy === 'string' ? policy : JSON.stringify(policy));
    return { POSTLINE_DATA_DIR: dir, POSTLINE_DELIVERY_POLICY: path };
  };

  test('POSTLINE_DELIVERY_POLICY brings the sources and pools into the config', () => {
    const config = loadConfig(env({ default: { maxConnections: 5 }, sources: SOURCES, pools: POOLS }));
    assert.deepEqual(config.deliveryPolicy.identity.sources.map((s) => s.name), ['tx1', 'bulk1', 'new1']);
  });

  test('a bad source stops start-up with a message naming the key', () => {
    assert.throws(
      () => loadConfig(env({ sources: { ...SOURCES, tx1: { address: 'nope', ehlo: 'mta1.example.com' } }, pools: POOLS })),
      (e: unknown) => e instanceof ConfigError && e.variable === 'POSTLINE_DELIVERY_POLICY' && /sources\.tx1\.address: must be an IPv4 or IPv6 address/.test(e.message),
    );
  });

  test('a file that is not JSON stops start-up', () => {
    assert.throws(() => loadConfig(env('{ sources: ')), (e: unknown) => e instanceof ConfigError && /is not valid JSON/.test(e.message));
  });
});

describe('SPF of sender domains names the source addresses', () => {
  test('with sources the suggested record lists each source address instead of the host, and the check wants all of them', () => {
    const addresses = ['203.0.113.10', '2001:db8::20'];
    assert.equal(spfRecordValue('mail.postline.test', addresses), 'v=spf1 ip4:203.0.113.10 ip6:2001:db8::20 ~all');
    assert.equal(compareSpf(['v=spf1 ip4:203.0.113.10 ip6:2001:db8::20 include:_spf.example.net -all'], 'mail.postline.test', addresses).status, 'verified');
    const missing = compareSpf(['v=spf1 ip4:203.0.113.10 ~all'], 'mail.postline.test', addresses);
    assert.equal(missing.status, 'mismatch');
    assert.match(missing.detail!, /does not include ip6:2001:db8::20$/);
  });

  test('the domain targets of a configuration carry its source addresses; without sources, none', () => {
    const base = { baseUrl: 'https://mail.postline.test', trackingHost: 'mail.postline.test' };
    assert.deepEqual(dnsTargetsOf({ ...base, deliveryPolicy: parsePolicy({ sources: SOURCES, pools: POOLS }) }).sourceAddresses, ['203.0.113.10', '203.0.113.20', '2001:db8::20']);
    assert.equal(dnsTargetsOf({ ...base, deliveryPolicy: parsePolicy({}) }).sourceAddresses, undefined);
  });
});
