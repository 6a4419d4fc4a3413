import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { RECIPIENT_DOMAIN, SENDER_DOMAIN } from '../helpers/mail-env.js';
import { startSubmissionEnv } from './env.js';

const env = await startSubmissionEnv();

/**
 * Runs a Python script with smtplib, as a Django or a cron job would send; it prints one JSON
 * line per outcome. PORT, TLS_PORT, KEY, CAFILE, FROM and TO are in its environment.
 */
function python(script: string, key = env.acme.liveKey): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const child = execFile('python3', ['-c', script], {
      env: {
        PORT: String(env.listeners.port), TLS_PORT: String(env.listeners.tlsPort), KEY: key, CAFILE: env.cert.certPath,
        FROM: `hello@${SENDER_DOMAIN}`, TO: `ada@${RECIPIENT_DOMAIN}`, PATH: process.env.PATH,
      },
      timeout: 30_000,
    }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`python failed: ${stderr || err.message}`));
      resolve(stdout.trim().split('\n').map((l) => JSON.parse(l) as unknown));
    });
    child.stdin?.end();
  });
}

const PRELUDE = `
import json, os, smtplib, ssl
from email.message import EmailMessage
ctx = ssl.create_default_context(cafile=os.environ['CAFILE'])
def message(sender, subject):
    m = EmailMessage()
    m['From'] = sender
    m['To'] = os.environ['TO']
    m['Subject'] = subject
    m.set_content('Sent by smtplib')
    return m
def attempt(s, m):
    try:
        refused = s.send_message(m)
        print(json.dumps({'ok': True, 'refused': list(refused)}))
    except smtplib.SMTPResponseException as e:
        print(json.dumps({'ok': False, 'code': e.smtp_code, 'text': e.smtp_error.decode()}))
`;

test('smtplib: STARTTLS and login on the submission port; a refusal keeps the connection, the next message on it is taken', async () => {
  const out = await python(`${PRELUDE}
with smtplib.SMTP('127.0.0.1', int(os.environ['PORT'])) as s:
    s.starttls(context=ctx)
    s.login('api', os.environ['KEY'])
    attempt(s, message('me@elsewhere.test', 'Unverified'))
    attempt(s, message(os.environ['FROM'], 'From smtplib'))
    print(json.dumps({'noop': s.noop()[0]}))
`);
  assert.deepEqual(out[0], { ok: false, code: 550, text: out[0] && (out[0] as { text: string }).text });
  assert.match((out[0] as { text: string }).text, /^5\.7\.1 sender_domain_unverified: /);
  assert.deepEqual(out.slice(1), [{ ok: true, refused: [] }, { noop: 250 }]);
  const { rows } = await env.pool.query(`SELECT status FROM messages WHERE account_id = $1 AND subject = 'From smtplib'`, [env.acme.accountId]);
  assert.deepEqual(rows, [{ status: 'queued' }]);
});

test('smtplib: SMTP_SSL on the implicit TLS port with AUTH LOGIN', async () => {
  const out = await python(`${PRELUDE}
with smtplib.SMTP_SSL('127.0.0.1', int(os.environ['TLS_PORT']), context=ctx) as s:
    s.ehlo()
    s.user, s.password = 'api', os.environ['KEY']
    code, _ = s.auth('LOGIN', s.auth_login)
    print(json.dumps({'auth': code}))
    attempt(s, message(os.environ['FROM'], 'Over SMTP_SSL'))
`);
  assert.deepEqual(out, [{ auth: 235 }, { ok: true, refused: [] }]);
});

test('smtplib: login before STARTTLS is refused and the server stays up for the next client', async () => {
  const out = await python(`${PRELUDE}
with smtplib.SMTP('127.0.0.1', int(os.environ['PORT'])) as s:
    try:
        s.login('api', os.environ['KEY'])
        print(json.dumps({'login': 'accepted'}))
    except smtplib.SMTPResponseException as e:
        print(json.dumps({'code': e.smtp_code, 'text': e.smtp_error.decode()}))
    print(json.dumps({'noop': s.noop()[0]}))
`);
  assert.equal((out[0] as { code: number }).code, 538);
  assert.match((out[0] as { text: string }).text, /STARTTLS/);
  assert.deepEqual(out[1], { noop: 250 });
});

test('smtplib: a wrong key is 535 5.7.8', async () => {
  const out = await python(`${PRELUDE}
with smtplib.SMTP('127.0.0.1', int(os.environ['PORT'])) as s:
    s.starttls(context=ctx)
    try:
        s.login('api', os.environ['KEY'])
    except smtplib.SMTPAuthenticationError as e:
        print(json.dumps({'code': e.smtp_code, 'text': e.smtp_error.decode()}))
`, 'sk_live_' + 'y'.repeat(43));
  assert.equal((out[0] as { code: number }).code, 535);
  assert.match((out[0] as { text: string }).text, /^5\.7\.8 /);
});
