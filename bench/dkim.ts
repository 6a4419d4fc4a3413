/**
 * `npm run bench:dkim`: µs per message to DKIM-sign a ~4 KB composed message twice (RSA-2048 +
 * Ed25519, relaxed/relaxed), mailauth's dkimSign against the narrow signer (src/mail/dkim/),
 * in-process, alternating rounds so machine load falls on both alike. Prints process CPU and
 * wall time per message, and the floor: the two node:crypto signatures alone.
 * ROUNDS (3) and MESSAGES (2,000 per round and variant) can be set in the environment.
 */
import crypto, { createHash, createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { dkimSign, type DKIMSignOptions } from 'mailauth';
import { composeMessage } from '../src/mail/compose.js';
import { DKIM_SIGNED_HEADERS, generateDkimKeyPair } from '../src/mail/dkim.js';
import { dkimSignatureHeaders, type DkimSignature } from '../src/mail/dkim/sign.js';

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const MESSAGES = Number(process.env.MESSAGES ?? 2000);
const DOMAIN = 'news.example.test';
const SIGN_TIME = new Date('2026-11-27T06:00:00Z');

const [rsa, ed] = await Promise.all([generateDkimKeyPair('rsa'), generateDkimKeyPair('ed25519')]);
const signatures: DkimSignature[] = [
  { algorithm: 'rsa', selector: 'pl1r', privateKeyPem: rsa.privateKeyPem },
  { algorithm: 'ed25519', selector: 'pl1e', privateKeyPem: ed.privateKeyPem },
];

// 16 distinct ~4 KB messages as the composer writes them (HTML + text alternative).
const paragraph = (i: number) =>
  `<p>Paragraph ${i}: thanks for being with us. Here is something that matters to you, with a <a href="https://example.com/p/${i}">link</a>. Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.</p>\n`;
const messages = await Promise.all(
  Array.from({ length: 16 }, (_, n) =>
    composeMessage({
      from: { email: `news@${DOMAIN}`, name: 'Example News' },
      to: [`reader${n}@example.org`],
      subject: `Your weekly digest №${n}`,
      html: Array.from({ length: 9 }, (_, i) => paragraph(i + n)).join(''),
      messageId: `msg_${n}@${DOMAIN}`,
      date: SIGN_TIME,
      listUnsubscribe: { url: `https://t.example.test/u/${n}`, mailto: `unsub@${DOMAIN}` },
    }),
  ),
);
const meanSize = messages.reduce((sum, m) => sum + m.length, 0) / messages.length;

const mailauthOptions = {
  headerList: DKIM_SIGNED_HEADERS.join(':') as unknown as string[],
  signTime: SIGN_TIME,
  signatureData: signatures.map((s) => ({
    signingDomain: DOMAIN,
    selector: s.selector,
    privateKey: s.privateKeyPem,
    algorithm: s.algorithm === 'rsa' ? 'rsa-sha256' : 'ed25519-sha256',
    canonicalization: 'relaxed/relaxed',
  })),
} as DKIMSignOptions;

// The production path before the narrow signer: mailauth with crypto.createPrivateKey patched to
// reuse the KeyObject of a PEM already seen (mailauth imports the PEM again per signature).
const realCreatePrivateKey = crypto.createPrivateKey;
const importedKeys = new Map<string, KeyObject>();
function patchKeyImport(on: boolean): void {
  (crypto as { createPrivateKey: typeof realCreatePrivateKey }).createPrivateKey = on
    ? (((input: { key: Buffer | string; format?: string }) => {
        const id = String(input.key);
        let key = importedKeys.get(id);
        if (!key) importedKeys.set(id, (key = realCreatePrivateKey(input as Parameters<typeof realCreatePrivateKey>[0])));
        return key;
      }) as typeof realCreatePrivateKey)
    : realCreatePrivateKey;
}

const rsaKey = createPrivateKey(rsa.privateKeyPem);
const edKey = createPrivateKey(ed.privateKeyPem);
const headerInput = Buffer.from('x'.repeat(700));

const variants: { name: string; run: (raw: Buffer) => unknown }[] = [
  { name: 'mailauth dkimSign, PEM imported per signature', run: (raw) => dkimSign(raw, mailauthOptions) },
  { name: 'mailauth dkimSign, key import cached (before)', run: (raw) => dkimSign(raw, mailauthOptions) },
  { name: 'narrow signer (after)', run: (raw) => dkimSignatureHeaders(raw, { domain: DOMAIN, signatures, signTime: SIGN_TIME, headerList: DKIM_SIGNED_HEADERS }) },
  { name: 'floor: RSA-2048 + Ed25519 crypto.sign alone', run: () => [sign('sha256', headerInput, rsaKey), sign(null, createHash('sha256').update(headerInput).digest(), edKey)] },
];

// The two paths must agree before their times mean anything.
const reference = (await dkimSign(messages[0], mailauthOptions)).signatures;
if (reference !== variants[2].run(messages[0])) throw new Error('the narrow signer and mailauth disagree');

const results = new Map<string, { cpu: number[]; wall: number[] }>(variants.map((v) => [v.name, { cpu: [], wall: [] }]));
for (let round = 0; round <= ROUNDS; round++) {
  for (const [i, variant] of variants.entries()) {
    patchKeyImport(i === 1);
    const count = round === 0 ? 200 : MESSAGES; // round 0 warms up
    const cpu0 = process.cpuUsage();
    const wall0 = performance.now();
    for (let n = 0; n < count; n++) await variant.run(messages[n % messages.length]);
    const cpu = process.cpuUsage(cpu0);
    const wall = performance.now() - wall0;
    if (round > 0) {
      results.get(variant.name)!.cpu.push((cpu.user + cpu.system) / count);
      results.get(variant.name)!.wall.push((wall * 1000) / count);
    }
  }
}
patchKeyImport(false);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(' / ');
console.log(`DKIM signing, ${messages.length} distinct composed messages of ${(meanSize / 1024).toFixed(1)} KB mean, RSA-2048 + Ed25519, relaxed/relaxed`);
console.log(`${ROUNDS} alternated rounds × ${MESSAGES} messages per variant; µs per message (rounds; median)`);
for (const [name, { cpu, wall }] of results) {
  console.log(`  ${name.padEnd(48)} CPU ${fmt(cpu)} (median ${median(cpu).toFixed(0)})   wall ${fmt(wall)} (median ${median(wall).toFixed(0)})`);
}
const before = median(results.get(variants[1].name)!.cpu);
const after = median(results.get(variants[2].name)!.cpu);
const floor = median(results.get(variants[3].name)!.cpu);
console.log(`narrow vs before: ${(before / after).toFixed(2)}× less CPU; narrow minus the signatures: ${(after - floor).toFixed(0)} µs per message (before: ${(before - floor).toFixed(0)} µs)`);
