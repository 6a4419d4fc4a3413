import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkFile, listEmlFiles, summarise } from '../../../src/mail/bounces/check.js';
import { runCli } from '../../helpers/cli.js';

const fixtures = new URL('../../fixtures/bounces/', import.meta.url);

/** A folder as an operator would have it: a few bounces, an auto-reply, an mbox-style export, a sub-folder, a non-.eml file. */
function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'postline-bounces-'));
  for (const f of ['exim-user-unknown.eml', 'postfix-dsn-spam.eml', 'autoreply-vacation.eml']) copyFileSync(new URL(f, fixtures), join(dir, f));
  mkdirSync(join(dir, 'more'));
  writeFileSync(join(dir, 'more', 'mbox.eml'), Buffer.concat([Buffer.from('From MAILER-DAEMON Mon Nov 18 09:12:44 2024\n'), readFileSync(new URL('qmail-two-recipients.eml', fixtures))]));
  writeFileSync(join(dir, 'notes.txt'), 'not mail');
  return dir;
}

test('cli: postline bounces check DIR --json prints one object per .eml file, without a database', async () => {
  const dir = folder();
  // No DATABASE_URL and a data dir that does not exist: the command must not need either.
  const r = await runCli(['bounces', 'check', dir, '--json'], { POSTLINE_DATA_DIR: join(dir, 'no-data-here'), DATABASE_URL: '' });
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(lines, [
    { file: 'autoreply-vacation.eml', kind: 'auto_reply', recipients: [] },
    { file: 'exim-user-unknown.eml', kind: 'bounce', recipients: [{ email: 'rita.fox@shop.example.net', status: '5.1.1', reason: 'user_unknown', dead: true }] },
    {
      file: join('more', 'mbox.eml'), kind: 'bounce', recipients: [
        { email: 'nobody.here@oldhost.example.org', status: '5.1.1', reason: 'user_unknown', dead: true },
        { email: 'pat.full@partner.example.com', status: '5.2.2', reason: 'mailbox_full', dead: false },
      ],
    },
    { file: 'postfix-dsn-spam.eml', kind: 'bounce', recipients: [{ email: 'lena@receiver.example.net', status: '5.7.1', reason: 'spam_detected', dead: false }] },
  ]);
});

test('bounces check: the summary counts kinds, failed recipients, dead ones and reasons', async () => {
  const dir = folder();
  const results = await Promise.all((await listEmlFiles(dir)).map((f) => checkFile(dir, f)));
  assert.deepEqual(summarise(results), {
    files: 4, kinds: { bounce: 3, complaint: 0, delivered: 0, auto_reply: 1, unknown: 0 }, recipients: 4, dead: 2, bouncesWithoutRecipient: 0,
    reasons: { user_unknown: 2, mailbox_full: 1, spam_detected: 1 },
  });
});

test('bounces check: an unreadable entry is reported, not fatal', async () => {
  const dir = folder();
  mkdirSync(join(dir, 'odd.eml'));
  const r = await checkFile(dir, 'odd.eml');
  assert.equal(r.kind, 'unknown');
  assert.match(String(r.error), /EISDIR|directory/);
});
