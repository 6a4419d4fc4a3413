import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { composeMessage } from '../../src/mail/compose.js';
import { dkimRecordName, dkimTxtRecord, generateDkimKeyPair, signMessage, type DkimSigningKey } from '../../src/mail/dkim.js';
import { generateCorpus } from '../helpers/dkim-corpus.js';

// Two verifiers that share no code with mailauth or with each other: OpenDKIM (C, `opendkim
// -t`, Debian's `opendkim`) and dkimpy (Python, Debian's `python3-dkim`). Each reads the
// published key records from a file the test writes (OpenDKIM's TestPublicKeys, dkimpy's
// dnsfunc): the record text is what DNS would answer. .ci/run installs both; a machine without
// them fails here rather than skipping the check.
const run = promisify(execFile);
const OPENDKIM = '/usr/sbin/opendkim';
const PYTHON = '/usr/bin/python3'; // Debian's interpreter, where python3-dkim is installed
const DKIMPY_HELPER = join(import.meta.dirname, '../helpers/dkimpy-verify.py');
const DOMAIN = 'verify.example.test';
const SAMPLE_SIZE = 50;

let dir: string;
let keys: DkimSigningKey[];

before(async () => {
  const missing = [
    existsSync(OPENDKIM) ? null : `${OPENDKIM} (Debian package opendkim)`,
    (await run(PYTHON, ['-c', 'import dkim, nacl']).then(() => true, () => false)) ? null : `${PYTHON} with dkimpy (Debian package python3-dkim)`,
  ].filter(Boolean);
  assert.deepEqual(missing, [], `DKIM verifiers missing: ${missing.join(', ')}; install them with apt-get install -y opendkim python3-dkim (.ci/run does)`);
  dir = mkdtempSync(join(tmpdir(), 'postline-dkim-verifiers-'));
  const [rsa, ed] = await Promise.all([generateDkimKeyPair('rsa'), generateDkimKeyPair('ed25519')]);
  keys = [
    { algorithm: 'rsa', selector: 'pl1r', privateKeyPem: rsa.privateKeyPem },
    { algorithm: 'ed25519', selector: 'pl1e', privateKeyPem: ed.privateKeyPem },
  ];
  const records = {
    [dkimRecordName('pl1r', DOMAIN)]: dkimTxtRecord('rsa', rsa.publicKeyPem),
    [dkimRecordName('pl1e', DOMAIN)]: dkimTxtRecord('ed25519', ed.publicKeyPem),
  };
  writeFileSync(join(dir, 'keys.json'), JSON.stringify(records));
  writeFileSync(join(dir, 'test-public-keys'), Object.entries(records).map(([name, txt]) => `${name} ${txt}\n`).join(''));
  writeFileSync(join(dir, 'opendkim.conf'), `Mode v\nSyslog no\nTestPublicKeys ${join(dir, 'test-public-keys')}\nAlwaysAddARHeader yes\n`);
});
after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Verdict {
  rsa: boolean;
  ed25519: boolean;
  /** Why not, when not both passed. */
  error?: string;
}

/** OpenDKIM's verdict per algorithm, read from the Authentication-Results it would add. */
async function openDkim(file: string): Promise<Verdict> {
  const output = await run(OPENDKIM, ['-x', join(dir, 'opendkim.conf'), '-vvv', '-t', file]).then(
    ({ stdout, stderr }) => stdout + stderr,
    (err: { stdout?: string; stderr?: string }) => `${err.stdout ?? ''}${err.stderr ?? ''}`,
  );
  const passed = (a: string) => new RegExp(`dkim=pass [^;]*header\\.d=${DOMAIN.replace(/\./g, '\\.')} [^;]*header\\.a=${a}\\b`).test(output);
  const verdict = { rsa: passed('rsa-sha256'), ed25519: passed('ed25519-sha256') };
  return verdict.rsa && verdict.ed25519 ? verdict : { ...verdict, error: output.split('\n').filter((l) => !/SMFIS_CONTINUE/.test(l)).slice(-6).join(' | ') };
}

async function dkimpy(files: string[]): Promise<Map<string, Verdict>> {
  const { stdout } = await run(PYTHON, [DKIMPY_HELPER, join(dir, 'keys.json'), ...files], { maxBuffer: 16 * 1024 * 1024 });
  const verdicts = new Map<string, Verdict>();
  for (const line of stdout.trim().split('\n')) {
    const { file, results, error } = JSON.parse(line) as { file: string; results?: { a: string; pass: boolean; reason: string | null }[]; error?: string };
    if (!results) {
      verdicts.set(file, { rsa: false, ed25519: false, error });
      continue;
    }
    const reasons = results.filter((r) => r.reason).map((r) => `${r.a}: ${r.reason}`);
    verdicts.set(file, {
      rsa: results.some((r) => r.a === 'rsa-sha256' && r.pass),
      ed25519: results.some((r) => r.a === 'ed25519-sha256' && r.pass),
      ...(reasons.length ? { error: reasons.join('; ') } : {}),
    });
  }
  return verdicts;
}

async function inBatches<T, R>(items: T[], size: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map(fn))));
  return out;
}

/**
 * The sample: the first well-formed message (see CorpusMessage.wellFormed) of every edge case
 * the corpus covers, then others up to 50.
 */
function sample(): { name: string; raw: Buffer }[] {
  // RFC 5322 asks for exactly one From; OpenDKIM judges nothing without it.
  const corpus = generateCorpus(2000, 0x5eed2026).filter((m) => m.wellFormed && (m.raw.toString('latin1').match(/^from[ \t]*:/gim) ?? []).length === 1);
  const chosen = new Map<number, (typeof corpus)[number]>();
  const traits = new Set(corpus.flatMap((m) => m.traits));
  for (const trait of traits) {
    const first = corpus.find((m) => m.traits.includes(trait) && !chosen.has(m.index));
    if (first) chosen.set(first.index, first);
  }
  for (const m of corpus) if (chosen.size < SAMPLE_SIZE - 2 && !chosen.has(m.index)) chosen.set(m.index, m);
  const covered = new Set([...chosen.values()].flatMap((m) => m.traits));
  for (const trait of [
    'mixed-case name', 'repeated header', 'unsigned header', 'folded header', '8-bit header', 'encoded word', 'empty value',
    'header trailing whitespace', 'empty body', 'body of only CRLFs', 'body of whitespace lines', 'trailing whitespace',
    'trailing empty lines', 'trailing whitespace lines', 'no final line break', 'long body (past 64 KiB)',
  ]) {
    assert.ok(covered.has(trait), `the verifier sample covers "${trait}"`);
  }
  return [...chosen.values()].map((m) => ({ name: `corpus-${m.index} (${m.traits.join(', ')})`, raw: m.raw }));
}

test(`dkim verifiers: OpenDKIM and dkimpy pass both signatures on ${SAMPLE_SIZE} signed messages, and fail a tampered one`, async () => {
  const messages = sample();
  // Two as Postline composes them: 8-bit names and subject, encoded by the composer.
  for (const [i, subject] of ['Grüße, voilà: ठीक 😀', 'a plain subject with  two spaces'].entries()) {
    messages.push({
      name: `composed-${i}`,
      raw: await composeMessage({
        from: { email: `news@${DOMAIN}`, name: 'Zoë\u00a0Ørsted' },
        to: ['alice@example.org'],
        subject,
        html: '<p>Hello\t <b>there</b>  </p>\n\n',
        messageId: `msg_${i}@${DOMAIN}`,
        date: new Date('2026-11-27T06:00:00.000Z'),
        listUnsubscribe: { url: 'https://t.example.test/u/1', mailto: `unsub@${DOMAIN}` },
      }),
    });
  }
  assert.equal(messages.length, SAMPLE_SIZE);
  const files: { name: string; file: string }[] = [];
  for (const [i, message] of messages.entries()) {
    const file = join(dir, `m${i}.eml`);
    const signed = await signMessage(message.raw, { domain: DOMAIN, keys });
    // What the receiver reads: SMTP's DATA ends the last line with a CRLF when it has none.
    writeFileSync(file, signed.at(-1) === 0x0a ? signed : Buffer.concat([signed, Buffer.from('\r\n')]));
    files.push({ name: message.name, file });
  }
  // The control: a body changed after signing must fail in both, or a pass proves nothing.
  const tampered = join(dir, 'tampered.eml');
  writeFileSync(tampered, Buffer.concat([await signMessage(messages[0].raw, { domain: DOMAIN, keys }), Buffer.from('appended after signing\r\n')]));

  const byPython = await dkimpy([...files.map((f) => f.file), tampered]);
  const byOpenDkim = await inBatches([...files.map((f) => f.file), tampered], 4, openDkim);
  const failures: string[] = [];
  files.forEach(({ name, file }, i) => {
    for (const [verifier, verdict] of [['OpenDKIM', byOpenDkim[i]], ['dkimpy', byPython.get(file)]] as const) {
      if (!verdict?.rsa || !verdict.ed25519) failures.push(`${verifier}: ${name}: ${JSON.stringify(verdict)}`);
    }
  });
  assert.deepEqual(failures, []);
  assert.deepEqual([byOpenDkim.at(-1)?.rsa, byOpenDkim.at(-1)?.ed25519], [false, false], 'OpenDKIM fails the tampered message');
  assert.deepEqual([byPython.get(tampered)?.rsa, byPython.get(tampered)?.ed25519], [false, false], 'dkimpy fails the tampered message');
});
