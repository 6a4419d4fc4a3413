import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { reserveWarmupSend } from '../../src/db/queries/warmup.js';
import { reverseName, startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { testDatabase } from '../helpers/db.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import {
  axeViolations, ensureDashboardBuilt, launchBrowser, newContext, PageProblems, screenshotPath, sidewaysOverflow, startServer, type RunningServer,
} from './harness.js';

/**
 * The dashboard in headless Chromium against the real server (`postline start`) on loopback:
 * the person's path from the first-start link to sending mail, then every page at desktop and
 * phone width with axe-core, no sideways scroll, no console error or failed request.
 */
const FIRST_LOAD_BUDGET = 300 * 1024;
let server: RunningServer;
let dns: TestDnsServer;
let receiver: WebhookReceiver;
let browser: Browser;
let page: Page;
const problems = new PageProblems();
const ids: Record<string, string> = {};
let liveKey = '';
const jsSizes = new Map<string, number>();

// At the top level: testDatabase() drops its database in an `after` of the file.
ensureDashboardBuilt();
const db = await testDatabase();

// Two source addresses (delivery is captured, so nothing is bound to them): tx1's DNS is right,
// bulk1's address has no PTR record, and bulk1 is on the first day of a warm-up.
const TODAY = new Date().toISOString().slice(0, 10);
const dataDir = mkdtempSync(join(tmpdir(), 'postline-e2e-'));
const policyPath = join(dataDir, 'delivery-policy.json');
writeFileSync(policyPath, JSON.stringify({
  sources: {
    tx1: { address: '127.0.0.81', ehlo: 'tx1.e2e-mta.test' },
    bulk1: { address: '127.0.0.82', ehlo: 'bulk1.e2e-mta.test', warmup: { start: TODAY, daily: [500, 1000] } },
  },
  pools: { transactional: ['tx1'], broadcast: ['bulk1'] },
}));

before(async () => {
  [dns, receiver] = await Promise.all([startDnsServer(), startWebhookReceiver()]);
  dns.setRecords('tx1.e2e-mta.test', 'A', ['127.0.0.81']);
  dns.setRecords(reverseName('127.0.0.81'), 'PTR', ['tx1.e2e-mta.test']);
  dns.setRecords('bulk1.e2e-mta.test', 'A', ['127.0.0.82']);
  server = await startServer({
    DATABASE_URL: db.url,
    POSTLINE_DATA_DIR: dataDir,
    POSTLINE_DELIVERY_POLICY: policyPath,
    POSTLINE_SECRET: 'e2e-secret-0123456789abcdef0123',
    POSTLINE_FBL_SECRET: 'fbl_e2e-secret-0123456789',
    POSTLINE_DELIVERY: 'capture',
    POSTLINE_DNS_SERVERS: dns.address,
    POSTLINE_TRACKING_HOST: 'track.postline.test',
    POSTLINE_WEBHOOK_ALLOW_PRIVATE: 'true',
  });
  browser = await launchBrowser();
  const context = await newContext(browser);
  page = await context.newPage();
  page.setDefaultTimeout(60_000);
  problems.watch(page);
  page.on('response', async (r) => {
    if (r.url().endsWith('.js') && r.ok()) jsSizes.set(r.url(), gzipSync(await r.body()).length);
  });
});

after(async () => {
  await browser?.close();
  await server?.stop();
  await Promise.all([dns?.close(), receiver?.close()]);
});

function assertNoProblems(where: string): void {
  assert.deepEqual(problems.take(), [], `problems on ${where}`);
}

async function api(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${server.baseUrl}/api/v1${path}`, {
    method, headers: { authorization: `Bearer ${liveKey}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
  });
  assert.ok(res.ok, `${method} ${path}: ${res.status}`);
  return (await res.json()) as Record<string, unknown>;
}

/** A test whose failure also tells where the page was, what it showed and what went wrong in it. */
function step(name: string, fn: () => Promise<void>): void {
  test(name, async () => {
    try {
      await fn();
    } catch (err) {
      const text = page ? await page.locator('body').innerText({ timeout: 5000 }).catch(() => '') : '';
      const where = page ? page.url() : '(no page)';
      if (page) await page.screenshot({ path: screenshotPath(`failed-${name.split(':')[0].replace(/\W+/g, '-')}`) }).catch(() => {});
      throw new Error(`${(err as Error).message}\n--- at ${where}\n--- page text:\n${text.slice(0, 1500)}\n--- problems:\n${problems.take().join('\n')}\n--- server log (last lines):\n${server?.output().split('\n').filter((l) => !l.includes('FSTDEP')).slice(-15).join('\n')}`);
    }
  });
}

const firstLoadJs = () => [...jsSizes.values()].reduce((a, b) => a + b, 0);

step('first start prints the dashboard URL and a one-time link; the link signs the owner in to set email and password', async () => {
  const out = server.output();
  assert.match(out, new RegExp(`Dashboard: ${server.baseUrl}/`));
  const link = /sign in once with (\S+)/.exec(out)?.[1];
  assert.ok(link, out);
  await page.goto(link);
  await page.waitForURL(`${server.baseUrl}/settings/account`);
  assert.doesNotMatch(page.url(), /link=/, 'the token leaves the address bar');
  const mine = page.getByRole('form', { name: 'Your sign-in' });
  await mine.getByLabel('Email', { exact: true }).fill('owner@e2e-shop.test');
  await mine.getByLabel('New password (at least 10 characters)').fill('a long e2e passphrase');
  await mine.getByRole('button', { name: 'Save' }).click();
  await page.getByText('Saved.').waitFor();
  assertNoProblems('account');
});

step('sign-out, then sign in with the plain form from the keyboard; first-load JS stays within budget signed out and signed in', async () => {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(`${server.baseUrl}/sign-in`);
  jsSizes.clear();
  await page.goto(`${server.baseUrl}/`);
  await page.waitForURL(/\/sign-in$/);
  await page.locator('input[type=email]').waitFor();
  const signedOut = firstLoadJs();
  assert.ok(signedOut <= FIRST_LOAD_BUDGET, `signed-out first load: ${signedOut} bytes of gzipped JS`);
  await page.locator('input[type=email]').focus();
  await page.keyboard.type('owner@e2e-shop.test');
  await page.keyboard.press('Tab');
  await page.keyboard.type('a long e2e passphrase');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  const signedIn = firstLoadJs();
  assert.ok(signedIn <= FIRST_LOAD_BUDGET, `signed-in first load: ${signedIn} bytes of gzipped JS`);
  process.stdout.write(`# first-load JS (gzip): signed out ${(signedOut / 1024).toFixed(1)} KiB, signed in ${(signedIn / 1024).toFixed(1)} KiB\n`);
  assert.equal(await page.locator('input[type=submit], button[type=submit]').count(), 0);
  assertNoProblems('sign-in');
});

step('API keys: a live key and a test key, each shown once with a copy button, gone after a reload', async () => {
  await page.goto(`${server.baseUrl}/settings/keys`);
  await page.getByLabel('Name', { exact: true }).fill('e2e server');
  await page.getByRole('button', { name: 'Create live key' }).click();
  liveKey = (await page.getByTestId('new-key').textContent()) ?? '';
  assert.match(liveKey, /^sk_live_/);
  await page.getByRole('button', { name: 'Copy', exact: true }).waitFor();
  await page.getByLabel(/Test key/).check();
  await page.getByRole('button', { name: 'Create test key' }).click();
  await page.getByTestId('new-key').filter({ hasText: /^sk_test_/ }).waitFor();
  const testKey = await page.getByTestId('new-key').textContent();
  await page.reload();
  await page.getByRole('heading', { name: 'API keys' }).waitFor();
  await page.getByRole('cell', { name: 'e2e server', exact: true }).waitFor();
  const html = await page.content();
  assert.ok(!html.includes(liveKey) && !html.includes(testKey!), 'no trace of the keys after a reload, hidden attributes included');
  assert.equal(await page.getByTestId('new-key').count(), 0);
  ids.key = liveKey;
  assertNoProblems('keys');
});

step('domains: add a domain, publish its records on the test DNS server, Verify, then Check tracking CNAME', async () => {
  await page.goto(`${server.baseUrl}/settings/domains`);
  await page.getByLabel('Domain', { exact: true }).fill('e2e-shop.test');
  await page.getByRole('button', { name: 'Add domain' }).click();
  await page.waitForURL(/\/settings\/domains\/dom_/);
  ids.domain = page.url().split('/').pop()!;
  const domain = await api('GET', `/domains/${ids.domain}`) as { records: { type: string; name: string; value: string; priority?: number }[] };
  for (const r of domain.records) {
    if (r.type === 'MX') dns.setRecords(r.name, 'MX', [{ exchange: r.value, priority: r.priority! }]);
    else if (r.type === 'CNAME') dns.setRecords(r.name, 'CNAME', [r.value]);
    else dns.setRecords(r.name, 'TXT', [r.value]);
  }
  await page.getByRole('button', { name: 'Verify' }).click();
  await page.getByRole('heading', { name: /e2e-shop\.test verified/ }).waitFor();
  await page.getByRole('button', { name: 'Check tracking CNAME' }).click();
  await page.getByTestId('tracking-state').filter({ hasText: 'Links and the open pixel use your domain' }).waitFor();
  assertNoProblems('domain');
});

step('webhooks: create with event checkboxes, the secret once, a test delivery in the log', async () => {
  await page.goto(`${server.baseUrl}/webhooks`);
  await page.getByLabel('Endpoint URL', { exact: true }).fill(receiver.url);
  await page.getByRole('checkbox', { name: 'open', exact: true }).first().check();
  await page.getByRole('button', { name: 'Create webhook' }).click();
  const secret = (await page.getByTestId('hook-secret').textContent()) ?? '';
  assert.match(secret, /^whsec_/);
  await page.reload();
  await page.getByRole('link', { name: receiver.url }).waitFor();
  assert.ok(!(await page.content()).includes(secret), 'the secret is gone after a reload');
  await page.getByRole('link', { name: receiver.url }).click();
  await page.getByRole('button', { name: 'Send test' }).click();
  await page.getByText(/Test delivered \(HTTP 200\)/).waitFor();
  await page.getByTestId('delivery-log').getByText('test').first().waitFor();
  ids.hook = page.url().split('/').pop()!;
  assert.ok(receiver.requests.length >= 1);
  // Rotate: a new secret, shown once as the first was.
  page.once('dialog', (d) => void d.accept());
  await page.getByRole('button', { name: 'Rotate secret' }).click();
  await page.getByTestId('hook-secret').filter({ hasText: /^whsec_/ }).filter({ hasNotText: secret }).waitFor();
  const rotated = (await page.getByTestId('hook-secret').textContent()) ?? '';
  await page.reload();
  await page.getByRole('button', { name: 'Rotate secret' }).waitFor();
  assert.ok(!(await page.content()).includes(rotated), 'the rotated secret is gone after a reload');
  // A hook the dispatcher disabled (after failing deliveries) is re-enabled from its page.
  await db.pool.query(`UPDATE hooks SET status = 'disabled', disabled_reason = 'failing for 3 days', disabled_at = now() WHERE id = $1`, [ids.hook]);
  await page.reload();
  await page.getByText('Disabled: failing for 3 days').waitFor();
  await page.getByRole('button', { name: 'Re-enable' }).click();
  await page.getByRole('button', { name: 'Re-enable' }).waitFor({ state: 'detached' });
  assert.equal((await api('GET', `/hooks/${ids.hook}`)).status, 'active');
  assertNoProblems('webhook');
});

step('templates: create, edit with a live preview of the unsaved draft through the render endpoint; a template error names line and column', async () => {
  await page.goto(`${server.baseUrl}/templates`);
  await page.getByLabel('New template name').fill('Welcome');
  await page.getByRole('button', { name: 'Create template' }).click();
  await page.waitForURL(/\/templates\/tpl_/);
  ids.template = page.url().split('/').pop()!;
  await page.getByLabel('Folder', { exact: true }).fill('Onboarding');
  // The preview follows the typing, before any save.
  await page.getByLabel('HTML', { exact: true }).fill('<h1>Hello {{ name }}, welcome!</h1>');
  await page.frameLocator('iframe[title="HTML preview"]').getByText('Hello Ada, welcome!').waitFor();
  await page.getByLabel('Sample variables (JSON)').fill('{ "name": "Grace" }');
  await page.frameLocator('iframe[title="HTML preview"]').getByText('Hello Grace, welcome!').waitFor();
  // A syntax error: the preview's render and the save both answer 422 template_error with the position.
  await problems.expecting([/HTTP 422: POST .*\/render$/, /HTTP 422: PATCH .*\/templates\//], async () => {
    await page.getByLabel('HTML', { exact: true }).fill('<p>\n[for item in items]\n{{ item }}');
    await page.getByTestId('template-error-position').filter({ hasText: /html: line \d+, column \d+/ }).waitFor();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('form', { name: 'Template' }).getByRole('alert').filter({ hasText: /Template error.*line \d+, column \d+/ }).waitFor();
  });
  await page.getByLabel('HTML', { exact: true }).fill('<h1>Hello {{ name }}, welcome!</h1>');
  await page.frameLocator('iframe[title="HTML preview"]').getByText('Hello Grace, welcome!').waitFor();
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  // The status line, not any text containing "saved": the buttons' "SaveDelete" does too, so
  // getByText('Saved') resolved at once without waiting for the save.
  await page.getByRole('status').filter({ hasText: /^Saved / }).waitFor();
  const saved = await api('GET', `/templates/${ids.template}`);
  assert.equal(saved.html, '<h1>Hello {{ name }}, welcome!</h1>');
  assert.equal(saved.folder, 'Onboarding');
  assertNoProblems('template');
});

step('suppression: add one, bulk add, search, remove', async () => {
  await page.goto(`${server.baseUrl}/suppression`);
  await page.getByLabel('Address', { exact: true }).fill('blocked@example.com');
  await page.getByRole('button', { name: 'Suppress' }).click();
  await page.getByRole('cell', { name: 'blocked@example.com', exact: true }).waitFor();
  await page.getByLabel('Bulk add (one address per line)').fill('a1@example.com\na2@example.com');
  await page.getByRole('button', { name: 'Add all' }).click();
  await page.getByText('Added 2; 0 already suppressed.').waitFor();
  await page.getByRole('button', { name: 'Remove blocked@example.com' }).click();
  await page.getByText('blocked@example.com removed from the suppression list.').waitFor();
  // The message shows when the DELETE answers; the list reloads after it, so wait for the row to go.
  await page.getByRole('cell', { name: 'blocked@example.com', exact: true }).waitFor({ state: 'detached' });
  await page.getByLabel('Search', { exact: true }).fill('a1@');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.waitForURL(/\/suppression\?q=a1%40$/);
  await page.getByRole('cell', { name: 'a1@example.com', exact: true }).waitFor();
  await page.getByRole('cell', { name: 'a2@example.com', exact: true }).waitFor({ state: 'detached' });
  assertNoProblems('suppression');
});

step('lists: create a list, import a CSV and watch the progress reach 100 %', async () => {
  await page.goto(`${server.baseUrl}/lists`);
  await page.getByLabel('New list name').fill('Newsletter');
  await page.getByRole('button', { name: 'Create list' }).click();
  await page.waitForURL(/\/lists\/lst_/);
  ids.list = page.url().split('/').pop()!;
  const rows = Array.from({ length: 40 }, (_, i) => `reader${i}@example.org,Reader ${i},${i % 2 ? 'pro' : 'free'}`);
  await page.getByLabel('…or paste CSV').fill(['email,name,plan', ...rows].join('\n'));
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  await page.getByTestId('import-status').filter({ hasText: 'Done: 40 created' }).waitFor();
  assert.equal(await page.getByTestId('import-progress').getAttribute('value'), '100');
  await page.getByTestId('subscribers').getByText('reader39@example.org').waitFor();
  assertNoProblems('list');
});

step('segments: the rule builder shows a live count, and saves', async () => {
  await page.goto(`${server.baseUrl}/segments/new`);
  await page.getByLabel('Name', { exact: true }).fill('Pro readers');
  // A half-typed rule is not counted (no 422 while typing): the builder asks to complete it.
  await page.getByTestId('segment-count').filter({ hasText: 'Complete each condition' }).waitFor();
  await page.getByLabel('Field 1').fill('attributes.plan');
  await page.getByLabel('Comparison 1').selectOption('eq');
  await page.getByLabel('Value 1').fill('pro');
  await page.getByTestId('segment-count').filter({ hasText: '20 subscribers match now' }).waitFor();
  await page.getByRole('button', { name: 'Save segment' }).click();
  await page.waitForURL(/\/segments\/seg_/);
  ids.segment = page.url().split('/').pop()!;
  assertNoProblems('segment');
});

step('messages: a sent message with its timeline and raw source; captured mail with its rendered preview and raw source', async () => {
  const sent = await api('POST', '/emails', { to: 'ada@example.net', from: { email: 'hello@e2e-shop.test' }, subject: 'Your receipt', html: '<p>Thanks, Ada!</p>', tags: ['receipt'] });
  ids.message = sent.id as string;
  for (let i = 0; i < 120; i++) {
    const m = await api('GET', `/emails/${ids.message}`);
    if (m.status === 'delivered') break;
    await new Promise((r) => setTimeout(r, 500));
  }
  await page.goto(`${server.baseUrl}/messages?tag=receipt`);
  await page.getByRole('link', { name: 'Your receipt' }).click();
  await page.getByTestId('timeline').getByText('delivered').waitFor();
  // GET /emails/{id}/raw: capture mode kept the bytes, so the page says they are the ones that would have left.
  await page.getByText('Raw source', { exact: true }).click();
  await page.getByTestId('raw-source').filter({ hasText: `Message-ID: <${ids.message}@e2e-shop.test>` }).waitFor();
  assert.match((await page.getByTestId('raw-source').textContent()) ?? '', /DKIM-Signature: /);
  await page.getByTestId('raw-source-kind').filter({ hasText: 'as they would have left' }).waitFor();
  await page.goto(`${server.baseUrl}/captured`);
  await page.getByRole('link', { name: 'Your receipt' }).click();
  // Rendered from the captured bytes: tracked links in place, the open pixel not loaded.
  const rendered = page.frameLocator('iframe[title="Rendered message"]');
  await rendered.getByText('Thanks, Ada!').waitFor();
  assert.equal(await rendered.locator('img[src]').count(), 0, 'no remote image (the open pixel) is loaded by the preview');
  await page.getByText('Remote images are not loaded here').waitFor();
  await page.getByText('Raw source', { exact: true }).click();
  await page.getByTestId('raw-source').filter({ hasText: 'Subject: Your receipt' }).waitFor();
  assertNoProblems('messages');
});

step('campaigns: create a draft, send it, watch progress reach 100 %, open the report; the overview charts the days', async () => {
  await page.goto(`${server.baseUrl}/campaigns`);
  await page.getByText('No campaigns yet.').waitFor();
  await page.getByRole('link', { name: 'New campaign' }).click();
  await page.getByLabel('Name', { exact: true }).fill('November news');
  await page.getByLabel('Subject', { exact: true }).fill('News for {{ subscriber.name | you }}');
  await page.getByLabel('From address').fill('news@e2e-shop.test');
  await page.getByRole('checkbox', { name: 'Newsletter' }).check();
  await page.getByLabel('HTML', { exact: true }).fill('<p>Hi {{ subscriber.name | there }}</p><p><a href="https://e2e-shop.test/blog">Read the blog</a></p>');
  await page.getByLabel('Tags (comma separated)').fill('news');
  await page.getByLabel('Reply-to (optional)').fill('editor@e2e-shop.test');
  await page.getByLabel('Merge field defaults (JSON object, optional)').fill('["not", "an object"]');
  await page.getByRole('button', { name: 'Create draft' }).click();
  await page.getByRole('alert').filter({ hasText: 'must be a JSON object' }).waitFor();
  await page.getByLabel('Merge field defaults (JSON object, optional)').fill('{"coupon": "NOV10"}');
  await page.getByRole('button', { name: 'Create draft' }).click();
  await page.waitForURL(/\/campaigns\/cmp_/);
  ids.campaign = page.url().split('/').pop()!;
  await page.getByRole('heading', { name: /November news/ }).getByText('draft').waitFor();
  await page.getByLabel('Send a test to (up to 5 addresses)').fill('qa@e2e-shop.test');
  await page.getByRole('button', { name: 'Send test' }).click();
  await page.getByText('Test copies sent to qa@e2e-shop.test.').waitFor();
  await page.getByRole('button', { name: 'Send now' }).click();
  await page.getByTestId('send-confirmation').getByRole('button', { name: /^Send to \d+ recipients$/ }).click();
  await page.getByTestId('campaign-percent').filter({ hasText: /^100 %/ }).waitFor({ timeout: 120_000 });
  assert.equal(await page.getByTestId('campaign-progress').getAttribute('value'), '100');
  await page.getByRole('heading', { name: /November news/ }).getByText('sent').waitFor({ timeout: 60_000 });
  await page.reload();
  const report = page.getByTestId('campaign-report');
  await report.getByText('Delivered').waitFor();
  assert.match((await report.textContent()) ?? '', /40Delivered100\.0\u00a0%/);
  await page.getByRole('img', { name: /Hourly activity: Delivered 40/ }).waitFor();
  await page.getByText('No clicks yet.').waitFor();
  // A reader clicks the blog link of the mail as the dashboard renders it: the tracked link of
  // that copy, followed as a mail client would (the white-label host is this server).
  await page.goto(`${server.baseUrl}/captured`);
  await page.getByRole('link', { name: 'News for Reader 3', exact: true }).click();
  const href = await page.frameLocator('iframe[title="Rendered message"]').getByRole('link', { name: 'Read the blog' }).getAttribute('href');
  assert.match(href ?? '', /\/t\/c\//);
  const click = await page.request.get(`${server.baseUrl}${new URL(href!).pathname}`, {
    maxRedirects: 0, headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36' },
  });
  assert.equal(click.status(), 302);
  assert.equal(click.headers().location, 'https://e2e-shop.test/blog');
  await page.goto(`${server.baseUrl}/campaigns/${ids.campaign}`);
  const topLinks = page.getByTestId('top-links');
  await topLinks.getByRole('row', { name: /https:\/\/e2e-shop\.test\/blog 1 1/ }).waitFor();
  assert.match((await report.textContent()) ?? '', /1Clicked2\.5\u00a0%/);
  await page.getByRole('link', { name: 'Recipients' }).click();
  await page.getByRole('cell', { name: 'reader0@example.org' }).waitFor();
  await page.goto(`${server.baseUrl}/campaigns?status=sent`);
  await page.getByRole('link', { name: 'November news' }).waitFor();
  await page.goto(`${server.baseUrl}/campaigns?status=draft`);
  await page.getByText('No draft campaigns.').waitFor();
  await page.goto(`${server.baseUrl}/`);
  await page.getByTestId('overview-stats').getByText('Delivered').waitFor();
  assert.match((await page.getByTestId('overview-stats').textContent()) ?? '', /42Sent/);
  // 40 campaign copies, the test copy and the earlier single send.
  await page.getByRole('img', { name: /Daily activity: Sent 42, Delivered 42/ }).waitFor();
  assertNoProblems('campaigns');
});

step('automations: create one in the editor (a 422 shown at its step path), edit it; its steps and counters, runs filtered by status, a run with its history', async () => {
  await page.goto(`${server.baseUrl}/automations`);
  await page.getByText('No automations yet.').waitFor();
  await page.getByRole('link', { name: 'New automation' }).click();
  await page.waitForURL(/\/automations\/new$/);
  await page.getByLabel('Name', { exact: true }).fill('Welcome series');
  await page.getByLabel('Trigger event').fill('e2e.signup');
  await page.getByLabel('Re-entry').selectOption('never');
  const first = page.getByTestId('step-steps[0]');
  await first.getByLabel('Subject', { exact: true }).fill('Welcome, {{ data.name }}');
  await first.getByLabel('HTML', { exact: true }).fill('<p>Welcome!</p>');
  await first.getByLabel('From address').fill('hello@e2e-shop.test');
  await page.getByLabel('Kind of step to add to the workflow', { exact: true }).selectOption('wait');
  await page.getByRole('button', { name: 'Add a step to the workflow', exact: true }).click();
  await page.getByTestId('step-steps[1]').getByLabel(/^Duration/).fill('2 days');
  await page.getByLabel('Kind of step to add to the workflow', { exact: true }).selectOption('condition');
  await page.getByRole('button', { name: 'Add a step to the workflow', exact: true }).click();
  const condition = page.getByTestId('step-steps[2]');
  await condition.getByLabel('Field 1').fill('email');
  await condition.getByLabel('Comparison 1').selectOption('contains');
  await condition.getByLabel('Value 1').fill('vip');
  await condition.getByLabel('Kind of step to add to Step 3 › if yes', { exact: true }).selectOption('exit');
  await condition.getByRole('button', { name: 'Add a step to Step 3 › if yes', exact: true }).click();
  await condition.getByLabel('Kind of step to add to Step 3 › if no', { exact: true }).selectOption('update_subscriber');
  await condition.getByRole('button', { name: 'Add a step to Step 3 › if no', exact: true }).click();
  await page.getByTestId('step-steps[2].else[0]').getByLabel('Set attributes (one key=value per line)').fill('stage=welcomed');
  // The API's 422 names steps[1].duration: the editor shows it at that step, and the problem above.
  await problems.expecting([/HTTP 422: POST .*\/api\/v1\/automations$/], async () => {
    await page.getByRole('button', { name: 'Create automation' }).click();
    await page.getByTestId('step-steps[1]').getByTestId('step-errors').filter({ hasText: 'Step 2 › duration' }).waitFor();
  });
  await page.getByRole('alert').filter({ hasText: 'Validation failed' }).waitFor();
  assert.equal(await page.getByTestId('step-steps[0]').getByTestId('step-errors').count(), 0, 'the error shows at its own step only');
  await page.getByTestId('step-steps[1]').getByLabel(/^Duration/).fill('2d');
  await page.getByRole('button', { name: 'Create automation' }).click();
  await page.waitForURL(/\/automations\/aut_/);
  ids.automation = page.url().split('/').pop()!;
  await page.getByText('Wait 2d').waitFor();
  const saved = await api('GET', `/automations/${ids.automation}`) as { reentry: string; steps: Record<string, unknown>[] };
  assert.equal(saved.reentry, 'never');
  const branch = saved.steps[2] as { type: string; if: unknown; then: unknown; else: { type: string; attributes: unknown }[] };
  assert.equal(branch.type, 'condition');
  assert.deepEqual(branch.if, { match: 'all', conditions: [{ field: 'email', op: 'contains', value: 'vip' }] });
  assert.deepEqual(branch.then, [{ type: 'exit' }]);
  assert.equal(branch.else[0].type, 'update_subscriber');
  assert.deepEqual(branch.else[0].attributes, { stage: 'welcomed' });
  // Edit: the second wait becomes 3d; the page shows the saved definition.
  await page.getByRole('link', { name: 'Edit', exact: true }).click();
  await page.waitForURL(/\/edit$/);
  await page.getByTestId('step-steps[1]').getByLabel(/^Duration/).fill('3d');
  await page.getByRole('button', { name: 'Save automation' }).click();
  await page.waitForURL(new RegExp(`/automations/${ids.automation}$`));
  await page.getByText('Wait 3d').waitFor();
  assertNoProblems('automation editor');

  const triggered = await api('POST', '/automations/trigger', { event: 'e2e.signup', email: 'grace@example.net', data: { name: 'Grace' } }) as { runs: { id: string }[] };
  ids.run = triggered.runs[0]!.id;
  for (let i = 0; i < 120; i++) {
    const r = await api('GET', `/automations/${ids.automation}/runs/${ids.run}`);
    if (r.status === 'waiting') break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  await page.goto(`${server.baseUrl}/automations`);
  await page.getByRole('link', { name: 'Welcome series' }).click();
  await page.getByTestId('automation-counters').filter({ hasText: '1In progress' }).waitFor();
  await page.getByTestId('send-counters').filter({ hasText: 'sent 1 · skipped 0' }).waitFor();
  await page.getByRole('link', { name: 'Runs', exact: true }).click();
  await page.getByLabel('Status').selectOption('completed');
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.getByText('No runs with status completed.').waitFor();
  await page.getByLabel('Status').selectOption('waiting');
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.getByRole('link', { name: 'grace@example.net' }).click();
  await page.waitForURL(/\/runs\/run_/);
  await page.getByTestId('run-history').getByText('sent', { exact: true }).waitFor();
  await page.getByTestId('run-history').getByRole('link', { name: 'message', exact: true }).waitFor();
  assertNoProblems('automations');
});

step('deliverability: each sending address with its pools, EHLO name, DNS warning and warm-up progress per provider', async () => {
  // What a worker's reservations leave behind: 120 sent to Gmail and 45 to Microsoft today.
  for (const [provider, n] of [['gmail', 120], ['microsoft', 45]] as const) {
    for (let i = 0; i < n; i++) assert.ok(await reserveWarmupSend(db.pool, { source: 'bulk1', provider, day: TODAY, cap: 500 }));
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(`${server.baseUrl}/`);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Deliverability' }).click();
  await page.getByRole('heading', { name: 'Sending addresses', level: 2 }).waitFor();
  const tx1 = page.getByTestId('source-tx1');
  const bulk1 = page.getByTestId('source-bulk1');
  await bulk1.waitFor();
  const tx1Text = await tx1.innerText();
  assert.match(tx1Text, /127\.0\.0\.81/);
  assert.match(tx1Text, /tx1\.e2e-mta\.test/);
  assert.match(tx1Text, /transactional/);
  assert.match(tx1Text, /DNS ok/);
  assert.match(tx1Text, /No warm-up plan/);
  assert.equal(await tx1.getByTestId('source-dns-warning').count(), 0);

  const bulkText = await bulk1.innerText();
  assert.match(bulkText, /bulk1\.e2e-mta\.test/);
  assert.match(bulkText, /broadcast/);
  const warning = bulk1.getByTestId('source-dns-warning');
  assert.ok(await warning.isVisible(), 'the DNS warning is shown');
  assert.match(await warning.innerText(), /127\.0\.0\.82 has no PTR record/);
  assert.match(bulkText, /Day 1 of the warm-up: up to 500 messages per provider today, 165 sent/);
  const gmail = bulk1.getByRole('progressbar', { name: 'gmail: 120 of 500' });
  assert.equal(await gmail.getAttribute('value'), '120');
  assert.equal(await gmail.getAttribute('max'), '500');
  assert.equal(await bulk1.getByRole('progressbar', { name: 'microsoft: 45 of 500' }).getAttribute('value'), '45');

  // The refresh picks up more sends without a reload.
  assert.ok(await reserveWarmupSend(db.pool, { source: 'bulk1', provider: 'gmail', day: TODAY, cap: 500 }));
  await bulk1.getByRole('progressbar', { name: 'gmail: 121 of 500' }).waitFor({ timeout: 15_000 });
  assertNoProblems('deliverability');
});

step('every page: its own URL survives a reload, axe-core finds nothing serious, no sideways scroll at 1280 and 390 px, screenshots', async () => {
  const pages: [string, string][] = [
    ['overview', '/'], ['messages', '/messages'], ['message', `/messages/${ids.message}`], ['templates', '/templates'],
    ['template', `/templates/${ids.template}`], ['suppression', '/suppression'], ['lists', '/lists'], ['list', `/lists/${ids.list}`],
    ['subscribers', '/subscribers'], ['segments', '/segments'], ['segment', `/segments/${ids.segment}`], ['webhooks', '/webhooks'],
    ['campaigns', '/campaigns'], ['campaign-new', '/campaigns/new'], ['campaign', `/campaigns/${ids.campaign}`], ['campaign-recipients', `/campaigns/${ids.campaign}/recipients`],
    ['automations', '/automations'], ['automation-new', '/automations/new'], ['automation', `/automations/${ids.automation}`], ['automation-edit', `/automations/${ids.automation}/edit`], ['automation-runs', `/automations/${ids.automation}/runs`], ['automation-run', `/automations/${ids.automation}/runs/${ids.run}`],
    ['webhook', `/webhooks/${ids.hook}`], ['captured', '/captured'], ['captured-message', `/captured/${ids.message}`],
    ['keys', '/settings/keys'], ['domains', '/settings/domains'], ['domain', `/settings/domains/${ids.domain}`], ['account', '/settings/account'],
    ['deliverability', '/deliverability'],
  ];
  const failures: string[] = [];
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    for (const [name, path] of pages) {
      await page.goto(`${server.baseUrl}${path}`);
      await page.locator('main h1').first().waitFor();
      await page.waitForLoadState('networkidle');
      await page.locator('.loading').waitFor({ state: 'detached' });
      assert.equal(new URL(page.url()).pathname, path.split('?')[0], `${path} stays at its URL`);
      const overflow = await sidewaysOverflow(page);
      if (overflow > 0) failures.push(`${name} at ${width}px scrolls sideways by ${overflow}px`);
      if (width === 1280) for (const v of await axeViolations(page)) failures.push(`${name}: ${v}`);
      await page.screenshot({ path: screenshotPath(`${name}-${width}`), fullPage: true });
      for (const p of problems.take()) failures.push(`${name} at ${width}px: ${p}`);
    }
  }
  await page.setViewportSize({ width: 390, height: 900 });
  await page.context().clearCookies();
  await page.goto(`${server.baseUrl}/sign-in`);
  await page.locator('input[type=email]').waitFor();
  for (const v of await axeViolations(page)) failures.push(`sign-in: ${v}`);
  if ((await sidewaysOverflow(page)) > 0) failures.push('sign-in scrolls sideways at 390px');
  await page.screenshot({ path: screenshotPath('sign-in-390') });
  failures.push(...problems.take());
  assert.deepEqual(failures, []);
});
