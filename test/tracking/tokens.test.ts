import { mock, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fc from 'fast-check';
import {
  isTrackableUrl,
  MAX_TOKEN_LENGTH,
  signClickToken,
  signOpenToken,
  signPayload,
  signUnsubscribeToken,
  verifyClickToken,
  verifyOpenToken,
  verifyPayload,
  verifyUnsubscribeToken,
} from '../../src/domain/tracking/tokens.js';

const KEY = crypto.randomBytes(32);
const OTHER_KEY = crypto.randomBytes(32);
const MSG = 'msg_0190aaaa0000700080000000000000a1';
const URL_ = 'https://shop.example/spring?utm_source=mail&q=a%20b#top';
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

test('open token: round trip', () => {
  assert.deepEqual(verifyOpenToken(KEY, signOpenToken(KEY, MSG)), { messageId: MSG });
});

test('unsubscribe token: round trip', () => {
  assert.deepEqual(verifyUnsubscribeToken(KEY, signUnsubscribeToken(KEY, MSG)), { messageId: MSG });
});

test('click token: round trip returns the URL exactly as signed', () => {
  const token = signClickToken(KEY, MSG, URL_);
  assert.deepEqual(verifyClickToken(KEY, token), { messageId: MSG, url: URL_ });
  const unicode = 'https://bücher.example/straße?q=ü&x={{ leftover }}';
  assert.deepEqual(verifyClickToken(KEY, signClickToken(KEY, MSG, unicode)), { messageId: MSG, url: unicode });
});

test('tokens are URL-safe, compact and carry the message id readable, nothing else', () => {
  const token = signOpenToken(KEY, MSG);
  assert.match(token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
  assert.ok(token.length <= 90, `open token is ${token.length} chars`);
  const payload = Buffer.from(token.split('.')[0], 'base64url').toString('utf8');
  assert.deepEqual(JSON.parse(payload), ['o', 0, MSG]);
});

test('a string key and a Buffer key both work; the same inputs give the same token', () => {
  assert.equal(signOpenToken('a-derived-key', MSG), signOpenToken(Buffer.from('a-derived-key'), MSG));
  assert.ok(verifyOpenToken('a-derived-key', signOpenToken('a-derived-key', MSG)));
});

test('every single-character change anywhere in the token is rejected', () => {
  const tokens = [signOpenToken(KEY, MSG), signClickToken(KEY, MSG, URL_), signUnsubscribeToken(KEY, MSG)];
  const verify = [verifyOpenToken, verifyClickToken, verifyUnsubscribeToken];
  let tried = 0;
  tokens.forEach((token, t) => {
    for (let i = 0; i < token.length; i++) {
      for (const c of BASE64URL + '.=+/ %') {
        if (c === token[i]) continue;
        const altered = token.slice(0, i) + c + token.slice(i + 1);
        assert.equal(verify[t](KEY, altered), null, `position ${i} → ${c}`);
        tried++;
      }
    }
  });
  assert.ok(tried > 10_000);
});

test('every bit flip of the decoded payload and MAC is rejected', () => {
  const token = signClickToken(KEY, MSG, URL_);
  const [payload, mac] = token.split('.').map((p) => Buffer.from(p, 'base64url'));
  for (const [which, bytes] of [['payload', payload], ['mac', mac]] as const) {
    for (let i = 0; i < bytes.length; i++) {
      for (let bit = 0; bit < 8; bit++) {
        const flipped = Buffer.from(bytes);
        flipped[i] ^= 1 << bit;
        const altered = which === 'payload' ? `${flipped.toString('base64url')}.${mac.toString('base64url')}` : `${payload.toString('base64url')}.${flipped.toString('base64url')}`;
        assert.equal(verifyClickToken(KEY, altered), null, `${which} byte ${i} bit ${bit}`);
      }
    }
  }
});

test('truncated or extended tokens are rejected', () => {
  const token = signClickToken(KEY, MSG, URL_);
  for (let n = 0; n < token.length; n++) assert.equal(verifyClickToken(KEY, token.slice(0, n)), null, `first ${n}`);
  for (let n = 1; n < token.length; n++) assert.equal(verifyClickToken(KEY, token.slice(n)), null, `from ${n}`);
  assert.equal(verifyClickToken(KEY, token + 'A'), null);
  assert.equal(verifyClickToken(KEY, token + '.'), null);
  assert.equal(verifyClickToken(KEY, token + '.' + token.split('.')[1]), null);
});

test('a token signed with another key is rejected', () => {
  assert.equal(verifyOpenToken(OTHER_KEY, signOpenToken(KEY, MSG)), null);
  assert.equal(verifyClickToken(OTHER_KEY, signClickToken(KEY, MSG, URL_)), null);
  assert.equal(verifyUnsubscribeToken(OTHER_KEY, signUnsubscribeToken(KEY, MSG)), null);
});

test('kind confusion: a token of one kind is refused as any other kind', () => {
  const open = signOpenToken(KEY, MSG);
  const unsub = signUnsubscribeToken(KEY, MSG);
  const click = signClickToken(KEY, MSG, URL_);
  assert.equal(verifyClickToken(KEY, open), null);
  assert.equal(verifyUnsubscribeToken(KEY, open), null);
  assert.equal(verifyOpenToken(KEY, unsub), null);
  assert.equal(verifyOpenToken(KEY, click), null);
  assert.equal(verifyUnsubscribeToken(KEY, click), null);
  assert.equal(verifyPayload(KEY, 'd', open), null);
});

test('kind confusion: the MAC is domain-separated, so relabelling the payload does not help', () => {
  // Take a valid open token, rewrite its payload's kind to "u" and keep the MAC.
  const [, mac] = signOpenToken(KEY, MSG).split('.');
  const relabelled = Buffer.from(JSON.stringify(['u', 0, MSG])).toString('base64url');
  assert.equal(verifyUnsubscribeToken(KEY, `${relabelled}.${mac}`), null);
  // And the same fields under two kinds produce unrelated MACs.
  assert.notEqual(signPayload(KEY, 'o', [MSG]).split('.')[1], signPayload(KEY, 'u', [MSG]).split('.')[1]);
});

test('javascript:, data: and other non-http(s) URLs are refused when signing', () => {
  for (const url of ['javascript:alert(1)', ' JAVASCRIPT:alert(1)', 'data:text/html,<script>1</script>', 'mailto:a@b.example', '//evil.example/', '/relative', 'https://', 'http://exa mple\n.com/', 'https://a.example/\r\nLocation: x']) {
    assert.throws(() => signClickToken(KEY, MSG, url), TypeError, url);
  }
});

test('a correctly signed token whose URL is not http(s) is still refused at verification', () => {
  // Signed through the generic helper, which does not know what a click URL is.
  for (const url of ['javascript:alert(document.cookie)', 'data:text/html,x', 'vbscript:x', 'https://a.example/\nx']) {
    assert.equal(verifyClickToken(KEY, signPayload(KEY, 'c', [MSG, url])), null, url);
  }
  assert.deepEqual(verifyClickToken(KEY, signPayload(KEY, 'c', [MSG, 'HTTP://A.EXAMPLE/'])), { messageId: MSG, url: 'HTTP://A.EXAMPLE/' });
});

test('isTrackableUrl: absolute http(s) with a host only', () => {
  assert.equal(isTrackableUrl('https://a.example/x'), true);
  assert.equal(isTrackableUrl('HTTP://A.EXAMPLE'), true);
  assert.equal(isTrackableUrl('https:/a.example'), false);
  assert.equal(isTrackableUrl('ftp://a.example/'), false);
  assert.equal(isTrackableUrl('\thttps://a.example/'), false);
});

test('isTrackableUrl: the memoised answer is the first one, for URLs of every length', () => {
  const long = `https://a.example/${'x'.repeat(3000)}`;
  const cases: [string, boolean][] = [['https://b.example/y', true], ['https:/b.example', false], ['http://', false], ['https://b.example/\u0007', false], [long, true], [`ftp${long.slice(5)}`, false]];
  for (let round = 0; round < 3; round++) {
    for (const [url, expected] of cases) assert.equal(isTrackableUrl(url), expected, `${round}: ${url.slice(0, 40)}`);
  }
});

test('malformed input is null, never an exception', () => {
  const samples: unknown[] = [
    undefined, null, 42, {}, [], '', '.', '..', 'abc', 'abc.', '.abc', 'a.b.c', '!!!.@@@',
    `${'A'.repeat(30)}.${'B'.repeat(22)}`, // well-formed shape, wrong MAC
    `${Buffer.from('not json').toString('base64url')}.${'A'.repeat(22)}`,
    'x'.repeat(MAX_TOKEN_LENGTH + 1),
  ];
  for (const s of samples) {
    assert.equal(verifyOpenToken(KEY, s), null);
    assert.equal(verifyClickToken(KEY, s), null);
    assert.equal(verifyUnsubscribeToken(KEY, s), null);
  }
  fc.assert(
    fc.property(fc.string({ maxLength: 200 }), (s) => {
      assert.equal(verifyClickToken(KEY, s), null);
    }),
  );
});

test('validly signed but ill-shaped payloads are rejected', () => {
  const forge = (value: unknown, kind = 'o') => {
    const payload = Buffer.from(JSON.stringify(value)).toString('base64url');
    const mac = crypto.createHmac('sha256', KEY).update(`postline-token/v1/${kind}\n`).update(payload).digest().subarray(0, 16).toString('base64url');
    return `${payload}.${mac}`;
  };
  assert.deepEqual(verifyOpenToken(KEY, forge(['o', 0, MSG])), { messageId: MSG }, 'the forge helper matches the format');
  assert.equal(verifyOpenToken(KEY, forge({ k: 'o', m: MSG })), null);
  assert.equal(verifyOpenToken(KEY, forge(['o', 0, 7])), null);
  assert.equal(verifyOpenToken(KEY, forge(['o', -1, MSG])), null);
  assert.equal(verifyOpenToken(KEY, forge(['o', 0, MSG, 'extra'])), null);
  assert.equal(verifyOpenToken(KEY, forge(['o', 0, 'not a message id'])), null);
  assert.equal(verifyOpenToken(KEY, forge(['u', 0, MSG])), null);
});

test('oversize: tokens over 8 KB are refused at signing and at verification', () => {
  assert.throws(() => signClickToken(KEY, MSG, `https://a.example/${'x'.repeat(MAX_TOKEN_LENGTH)}`), RangeError);
  const big = `https://a.example/${'x'.repeat(5000)}`;
  const token = signClickToken(KEY, MSG, big);
  assert.ok(token.length < MAX_TOKEN_LENGTH);
  assert.deepEqual(verifyClickToken(KEY, token), { messageId: MSG, url: big });
});

test('signing refuses a bad message id or kind', () => {
  assert.throws(() => signOpenToken(KEY, ''), TypeError);
  assert.throws(() => signOpenToken(KEY, 'msg 1'), TypeError);
  assert.throws(() => signPayload(KEY, 'Bad Kind', ['x']), TypeError);
  assert.throws(() => signPayload(KEY, '', ['x']), TypeError);
});

test('generic payload: round trip of a double opt-in confirmation', () => {
  const token = signPayload(KEY, 'd', ['sub_0190aaaa0000700080000000000000a1', 'lst_0190aaaa0000700080000000000000a2']);
  assert.deepEqual(verifyPayload(KEY, 'd', token), ['sub_0190aaaa0000700080000000000000a1', 'lst_0190aaaa0000700080000000000000a2']);
  assert.equal(verifyPayload(KEY, 'o', token), null);
});

test('generic payload: expiresAt is enforced at verification', () => {
  const expiresAt = new Date('2030-01-01T00:00:00Z');
  const token = signPayload(KEY, 'd', ['sub_1'], { expiresAt });
  assert.deepEqual(verifyPayload(KEY, 'd', token, { now: new Date('2029-12-31T23:59:59Z') }), ['sub_1']);
  assert.equal(verifyPayload(KEY, 'd', token, { now: expiresAt }), null);
  assert.equal(verifyPayload(KEY, 'd', token, { now: new Date('2031-01-01T00:00:00Z') }), null);
});

test('verification compares MACs with crypto.timingSafeEqual, also when the MAC is wrong', () => {
  const spy = mock.method(crypto, 'timingSafeEqual');
  try {
    const token = signOpenToken(KEY, MSG);
    assert.ok(verifyOpenToken(KEY, token));
    assert.equal(verifyOpenToken(OTHER_KEY, token), null);
    assert.equal(spy.mock.callCount(), 2);
    for (const call of spy.mock.calls) {
      const [a, b] = call.arguments as [Buffer, Buffer];
      assert.equal(a.length, 22);
      assert.equal(b.length, 22);
    }
  } finally {
    spy.mock.restore();
  }
});

test('property: any signed payload round-trips, and any other key fails', () => {
  fc.assert(
    fc.property(fc.array(fc.string({ unit: 'grapheme', maxLength: 40 }), { maxLength: 5 }), fc.constantFrom('o', 'c', 'u', 'd', 'confirm-1'), (fields, kind) => {
      const token = signPayload(KEY, kind, fields);
      assert.deepEqual(verifyPayload(KEY, kind, token), fields);
      assert.equal(verifyPayload(OTHER_KEY, kind, token), null);
    }),
  );
});
