import { test } from 'node:test';
import assert from 'node:assert/strict';
import { headerField, repeatedHeaderField, type HeaderValue } from '../../src/mail/mime/header-fields.js';

// Header values that repeat across the copies of a template are encoded once
// (docs/decisions/0048-per-recipient-copies.md): the memo must answer what headerField answers
// for every value, however close to one seen before.

test('repeatedHeaderField answers what headerField answers, for values that differ only in kind, name or case', () => {
  const values: [string, Exclude<HeaderValue, Date>][] = [
    ['Subject', 'Grüße'],
    ['Subject', { prepared: true, foldLines: true, value: 'Grüße' }],
    ['Subject', '=?UTF-8?Q?Gr=C3=BC=C3=9Fe?='],
    ['Subject', { prepared: true, foldLines: true, value: '=?UTF-8?Q?Gr=C3=BC=C3=9Fe?=' }],
    ['From', { name: 'Shop', address: 'shop@example.com' }],
    ['From', { name: 'Zoë\'s Shop', address: 'shop@example.com' }],
    ['From', { name: '', address: 'shop@example.com' }],
    ['From', { name: 'Shop', address: 'Shop@example.com' }],
    ['Reply-To', [{ name: 'Shop', address: 'shop@example.com' }]],
    ['Reply-To', [{ name: 'Shop', address: 'shop@example.com' }, { name: 'Help', address: 'help@example.com' }]],
    ['Reply-To', [{ name: 'Shop, Help', address: 'shop@example.com' }]],
    ['X-Campaign', 'autumn'],
    ['X-Campaign', 'autumn '],
    ['X-Other', 'autumn'],
    ['X-Campaign', ''],
    ['X-Campaign', `${'long value '.repeat(20)}end`],
  ];
  for (let round = 0; round < 3; round++) {
    for (const [key, value] of values) {
      assert.equal(repeatedHeaderField(key, value), headerField(key, value), `${key}: ${JSON.stringify(value)} (round ${round})`);
    }
  }
  // The kinds are told apart: a prepared value is written as it is, a string is encoded.
  assert.notEqual(repeatedHeaderField('Subject', 'Grüße'), repeatedHeaderField('Subject', { prepared: true, foldLines: true, value: 'Grüße' }));
});
