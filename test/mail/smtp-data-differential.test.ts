import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Transform } from 'node:stream';
import { toDataWire } from '../../src/mail/smtp-data/wire-form.js';
import { generateDataCorpus, type DataCase } from '../helpers/smtp-data-corpus.js';

// The wire form (src/mail/smtp-data/wire-form.ts) must be exactly what nodemailer's DataStream
// puts on the wire for the same message, terminator included
// (docs/decisions/0044-smtp-data-in-wire-form.md). DataStream is fed each message in chunks
// split at seeded places (between CR and LF, before a dot), as a stream can deliver it.

const CORPUS_SIZE = 2400;
const SEED = 0x5eed_0044;

// DataStream is not among nodemailer's exported paths: it sits next to SMTPConnection.
const DataStream = (
  (await import(new URL('data-stream.js', import.meta.resolve('nodemailer/lib/smtp-connection')).href)) as { default: new () => Transform }
).default;

function throughDataStream({ raw, splits }: DataCase): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const stream = new DataStream();
    const out: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => out.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(out)));
    stream.on('error', reject);
    let from = 0;
    for (const at of [...splits, raw.length]) {
      stream.write(raw.subarray(from, at));
      from = at;
    }
    stream.end();
  });
}

const corpus = generateDataCorpus(CORPUS_SIZE, SEED);
const expected = await Promise.all(corpus.map(throughDataStream));

/** The first case `wire` gets wrong, or null. */
function firstMismatch(wire: (raw: Buffer) => Buffer): { index: number; traits: string[]; got: string; want: string } | null {
  for (const c of corpus) {
    const got = wire(c.raw);
    if (!got.equals(expected[c.index])) return { index: c.index, traits: c.traits, got: JSON.stringify(got.toString('latin1')), want: JSON.stringify(expected[c.index].toString('latin1')) };
  }
  return null;
}

test(`the wire form is DataStream's output, byte for byte, for ${CORPUS_SIZE} seeded messages`, () => {
  const mismatch = firstMismatch(toDataWire);
  assert.equal(mismatch, null, mismatch ? `message ${mismatch.index} (${mismatch.traits.join(', ')}):\n got ${mismatch.got.slice(0, 400)}\nwant ${mismatch.want.slice(0, 400)}` : '');
  const traits = new Map<string, number>();
  for (const c of corpus) for (const t of c.traits) traits.set(t, (traits.get(t) ?? 0) + 1);
  for (const t of ['built by the MIME writer', 'dot at line start', 'a line of a lone dot', 'raw 8-bit bytes', 'no final CRLF', 'long message', 'bare LF', 'bare CR', 'dot after a bare CR', 'ends with a bare CR', 'ends with a bare LF', 'dense edge string', 'empty message', 'dot as the first byte', 'ends with CR', 'fed in chunks', 'chunk split inside CRLF', 'chunk split before a dot']) {
    assert.ok((traits.get(t) ?? 0) >= 3, `the corpus has "${t}" only ${traits.get(t) ?? 0} times`);
  }
});

// Each mutation breaks one rule of the wire form; the corpus must catch every one. They are
// applied to a copy of the module's source (it imports nothing), so the test checks the code
// as written rather than a re-statement of it.
const MUTATIONS: { name: string; from: string; to: string }[] = [
  { name: 'a dot as the first byte is not doubled', from: 'if (n > 0 && raw[0] === DOT) insertAt(0, STUFFED_DOT);', to: '' },
  { name: 'a dot after CRLF is not doubled', from: 'if (lineStart < n && raw[lineStart] === DOT) insertAt(lineStart, STUFFED_DOT);\n        cr = text', to: 'cr = text' },
  { name: 'a dot after a bare LF is not doubled', from: 'if (lineStart < n && raw[lineStart] === DOT) insertAt(lineStart, STUFFED_DOT);\n      lf = text', to: 'lf = text' },
  { name: 'a dot after a bare CR is not doubled', from: 'raw[next] === DOT ? LF_AFTER_CR_STUFFED_DOT : LF_AFTER_CR', to: 'LF_AFTER_CR' },
  { name: 'a bare CR stays bare', from: 'if (next < n) insertAt(next, raw[next] === DOT ? LF_AFTER_CR_STUFFED_DOT : LF_AFTER_CR);', to: '' },
  { name: 'a bare CR at the end gets its LF twice', from: 'if (next < n) insertAt(next,', to: 'insertAt(next,' },
  { name: 'a bare LF stays bare', from: 'insertAt(lf, CR_BEFORE_LF);', to: '' },
  { name: 'the terminator ignores a final LF', from: 'last === LF ? END_AFTER_LF : ', to: '' },
  { name: 'the terminator ignores a final CR', from: 'last === CR ? END_AFTER_CR : ', to: '' },
  { name: 'the last piece is left out', from: 'pieces.push(raw.subarray(copied), end);', to: 'pieces.push(end);' },
  { name: 'a CRLF split by the scan counts as a bare CR', from: 'if (next < n && raw[next] === LF) {', to: 'if (next < n - 1 && raw[next] === LF) {' },
];

test('every mutation of the wire form is caught by the corpus', async () => {
  const source = readFileSync(fileURLToPath(new URL('../../src/mail/smtp-data/wire-form.ts', import.meta.url)), 'utf8');
  const dir = mkdtempSync(join(tmpdir(), 'postline-wire-mutants-'));
  try {
    for (const [i, { name, from, to }] of MUTATIONS.entries()) {
      assert.ok(source.includes(from), `mutation "${name}": the source no longer contains ${JSON.stringify(from)}`);
      const file = join(dir, `mutant-${i}.ts`);
      writeFileSync(file, source.replace(from, to));
      const mutant = (await import(pathToFileURL(file).href)) as { toDataWire: (raw: Buffer) => Buffer };
      let caught: boolean;
      try {
        caught = firstMismatch(mutant.toDataWire) !== null;
      } catch {
        caught = true; // a mutant may also throw (a Buffer.concat past its length)
      }
      assert.ok(caught, `mutation "${name}" was not caught`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
