import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dataWireMadeWith, messageWithDataWire } from '../../src/mail/smtp-data/made-with-message.js';
import { toDataWire } from '../../src/mail/smtp-data/wire-form.js';
import { generateDataCorpus } from '../helpers/smtp-data-corpus.js';

// The wire form the build step makes with a message (src/mail/smtp-data/made-with-message.ts)
// must be toDataWire's for that message, itself proven equal to nodemailer's DataStream by
// test/mail/smtp-data-differential.test.ts; the message bytes must be the string's UTF-8 either way.
// docs/decisions/0050-build-step-from-written-strings.md.

test('a wire form made with the message is toDataWire\'s, over 2,400 messages of the SMTP DATA corpus', () => {
  let made = 0;
  let notMade = 0;
  for (const { index, traits, raw } of generateDataCorpus(2400, 0x5eed_0050)) {
    const message = raw.toString('utf8');
    if (!Buffer.from(message, 'utf8').equals(raw)) continue; // bytes that are not UTF-8 text
    const bytes = messageWithDataWire(message);
    assert.ok(bytes.equals(raw), `message ${index}: the message's bytes`);
    const wire = dataWireMadeWith(bytes);
    if (!wire) {
      notMade++;
      continue;
    }
    made++;
    const reference = toDataWire(bytes);
    if (!wire.equals(reference)) assert.equal(wire.toString('latin1'), reference.toString('latin1'), `message ${index} (${traits.join(', ')})`);
  }
  // Built messages without dots at line starts get one; bare CR or LF, dots, no final CRLF do not.
  assert.ok(made >= 100 && notMade >= 1000, `made for ${made}, not for ${notMade}`);
});

test('no wire form is made for what needs more than a terminator', () => {
  for (const message of ['.starts with a dot\r\n', 'a\r\n.b\r\n', 'lone\rCR\r\n', 'lone\nLF\r\n', 'no final line break', 'ends in CR\r', 'ends in LF\n', '']) {
    assert.equal(dataWireMadeWith(messageWithDataWire(message)), undefined, JSON.stringify(message));
  }
  const raw = messageWithDataWire('Subject: x\r\n\r\nbody\r\n');
  assert.equal(dataWireMadeWith(raw)?.toString(), 'Subject: x\r\n\r\nbody\r\n.\r\n');
  assert.equal(dataWireMadeWith(Buffer.from(raw)), undefined, 'a copy of the message is not the message the wire form was made with');
});
