import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { composeNarrowWritten } from '../../src/mail/compose.js';
import { DKIM_SIGNED_HEADERS, generateDkimKeyPair, signMessage, signWrittenMessage, type DkimSigningKey } from '../../src/mail/dkim.js';
import { dkimSignatureHeadersOfWritten } from '../../src/mail/dkim/sign.js';
import { generateComposeCorpus } from '../helpers/compose-corpus.js';
import { generateTemplateCopiesCorpus } from '../helpers/template-copies-corpus.js';
import { generateCorpus } from '../helpers/dkim-corpus.js';
import { dataWireMadeWith, messageWithDataWire } from '../../src/mail/smtp-data/made-with-message.js';
import { toDataWire } from '../../src/mail/smtp-data/wire-form.js';

// The build step signs the narrow MIME writer's strings as they are (header fields and body,
// src/mail/dkim.ts signWrittenMessage) and makes the signed message bytes once: it must give
// exactly signMessage's bytes for the message those strings make, b= included (RSA PKCS#1 v1.5
// and Ed25519 are deterministic). signMessage is itself proven equal to mailauth's dkimSign by
// test/mail/dkim-differential.test.ts. docs/decisions/0050-build-step-from-written-strings.md.
// The build step makes the SMTP DATA wire form in the same buffer when it is the message and a
// terminator (src/mail/smtp-data/made-with-message.ts): each must be toDataWire's bytes, itself
// proven equal to nodemailer's DataStream by test/mail/smtp-data-differential.test.ts.

const DOMAIN = 'mail.example.test';
const SIGN_TIME = new Date('2026-11-27T06:00:00.750Z');
let keys: DkimSigningKey[];

before(async () => {
  const [rsa, ed] = await Promise.all([generateDkimKeyPair('rsa'), generateDkimKeyPair('ed25519')]);
  keys = [
    { algorithm: 'rsa', selector: 'pl1r', privateKeyPem: rsa.privateKeyPem },
    { algorithm: 'ed25519', selector: 'pl1e', privateKeyPem: ed.privateKeyPem },
  ];
});

const request = () => ({ domain: DOMAIN, signatures: keys, signTime: SIGN_TIME, headerList: DKIM_SIGNED_HEADERS });

const wireForms = { made: 0, notMade: 0 };

/** Both ways for one message; whether the strings were read as they are (not handed back to signMessage). */
async function compare(written: { headerFields: string[]; body: string }, label: string): Promise<boolean> {
  const opts = { domain: DOMAIN, keys, signTime: SIGN_TIME };
  const expected = await signMessage(Buffer.from(`${written.headerFields.join('\r\n')}\r\n\r\n${written.body}`, 'utf8'), opts);
  const actual = await signWrittenMessage(written, opts, messageWithDataWire);
  if (!actual.equals(expected)) assert.equal(actual.toString('latin1'), expected.toString('latin1'), label);
  const wire = dataWireMadeWith(actual);
  if (wire) {
    wireForms.made++;
    const reference = toDataWire(actual);
    if (!wire.equals(reference)) assert.equal(wire.toString('latin1'), reference.toString('latin1'), `${label}: wire form`);
  } else wireForms.notMade++;
  return dkimSignatureHeadersOfWritten(written.headerFields, written.body, request()) !== null;
}

const boundaryBase = (index: number) => ((index * 2654435761) >>> 0).toString(16).padStart(16, 'c');

test('composed messages: signed from the writer\'s strings, the bytes signMessage makes of the composed message (2,400 messages of every shape, 1,200 per-recipient copies)', async () => {
  let fromStrings = 0;
  let messages = 0;
  const corpora = [
    ...generateComposeCorpus(2400, 0x5eed_0041).map((c) => ({ ...c, label: `message ${c.index}` })),
    ...generateTemplateCopiesCorpus(1200, 0x5eed_0048).map((c) => ({ ...c, label: `copy ${c.index}` })),
  ];
  for (const { index, traits, input, label } of corpora) {
    const written = composeNarrowWritten(input, boundaryBase(index));
    if (written === null) continue; // a shape left to MailComposer: its bytes are signed by signMessage
    messages++;
    if (await compare(written, `${label} (${traits.join(', ')})`)) fromStrings++;
  }
  // What the writer writes is ASCII with CRLF line breaks: every message is read from its strings.
  assert.ok(messages >= 3000, `only ${messages} messages written by the narrow writer`);
  assert.equal(fromStrings, messages, 'every composed message is signed from its strings');
  // The corpus is hard on the wire form (dots at line starts, lone CRs in 7bit text): both occur.
  assert.ok(wireForms.made >= 1000 && wireForms.notMade >= 1000, `wire forms made for ${wireForms.made}, not for ${wireForms.notMade}`);
});

test('the DKIM corpus handed over as strings: the same bytes as signMessage, read from the strings where they read as the bytes do (2,000 messages)', async (t) => {
  let fromStrings = 0;
  let handedBack = 0;
  for (const { index, traits, raw } of generateCorpus(2000, 0x5eed_0050)) {
    const text = raw.toString('utf8');
    const end = text.indexOf('\r\n\r\n');
    if (end === -1) continue;
    // The header block cut into fields as parseHeaderFields reads it (at each CRLF not followed
    // by whitespace); one message in five at each CRLF not followed by SP or TAB, which leaves a
    // line starting with VT or FF as a field of its own, to be handed back.
    const cut = index % 5 === 0 ? /\r\n(?![ \t])/ : /\r\n(?!\s)/;
    const written = { headerFields: text.slice(0, end).split(cut), body: text.slice(end + 4) };
    if (await compare(written, `message ${index} (${traits.join(', ')})`)) fromStrings++;
    else handedBack++;
  }
  // Lone CR or LF and fields starting with whitespace are handed back; the rest (8-bit header
  // text, folding with tabs, VT and FF, whitespace before the colon, trailing whitespace, bodies
  // that need rewriting) is read from the strings.
  t.diagnostic(`${fromStrings} read from the strings, ${handedBack} handed back; wire forms made with ${wireForms.made} messages of both tests, not with ${wireForms.notMade}`);
  assert.ok(fromStrings >= 1200, `only ${fromStrings} read from the strings`);
  assert.ok(handedBack >= 100, `only ${handedBack} handed back to signMessage`);
});
