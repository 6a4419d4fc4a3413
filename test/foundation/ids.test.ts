import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validate, version } from 'uuid';
import { hasPrefix, newId } from '../../src/ids.js';

// newId (src/ids.ts) draws its random bits from the process's pool rather than one CSPRNG call
// per id: ids must stay well-formed UUIDv7, unique across many pool refills, in creation order
// within the process (pagination cursors), and carry the time they were made.
const asUuid = (hex: string) => `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;

test('newId: 200,000 ids are unique, well-formed UUIDv7 with their prefix, in creation order, stamped with their millisecond', () => {
  const before = Date.now();
  const ids = Array.from({ length: 200_000 }, () => newId('msg'));
  const after = Date.now();
  assert.equal(new Set(ids).size, ids.length, 'unique');
  for (const id of ids) {
    assert.ok(hasPrefix(id, 'msg'), id);
    const uuid = asUuid(id.slice(4));
    assert.ok(validate(uuid), uuid);
    assert.equal(version(uuid), 7);
    assert.match(uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'version 7, RFC 9562 variant');
  }
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1].slice(4) < ids[i].slice(4), `out of order at ${i}: ${ids[i - 1]} ${ids[i]}`);
  const ms = (id: string) => parseInt(id.slice(4, 16), 16);
  assert.ok(ms(ids[0]) >= before && ms(ids[0]) <= after);
  // The sequence may borrow a millisecond or so when it wraps; never more than a few.
  assert.ok(ms(ids.at(-1)!) >= before && ms(ids.at(-1)!) <= after + 5);
});

test('newId: the random tail differs between ids of one millisecond, so ids stay unguessable', () => {
  const ids = Array.from({ length: 1000 }, () => newId('evt'));
  const tails = new Set(ids.map((id) => id.slice(-12)));
  assert.equal(tails.size, ids.length, 'the last 48 bits are fresh random bytes for every id');
});
