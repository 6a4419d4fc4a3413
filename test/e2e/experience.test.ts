import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { throttleDestination } from '../../src/db/queries/shaping.js';
import { testDatabase } from '../helpers/db.js';
import {
  axeViolations, ensureDashboardBuilt, launchBrowser, newContext, PageProblems, screenshotPath, sidewaysOverflow, startServer, type RunningServer,
} from './harness.js';

/**
 * What a new user noticed first, in the browser against the real server in development mode
 * (capture delivery): grouped navigation, "Mark verified", counts after an import, a subscriber
 * page, the HTML code editor with merge-field warnings and a preview as a chosen subscriber, a
 * campaign draft's preview, audience size, Edit and send confirmation, editors in words, the
 * quota card, bars for one data point, compressed assets. Screenshots go to docs/dashboard/.
 */
const DOCS_SHOTS = fileURLToPath(new URL('../../docs/dashboard/', import.meta.url));
let server: RunningServer;
let browser: Browser;
let page: Page;
let liveKey = '';
const problems = new PageProblems();
const ids: Record<string, string> = {};

ensureDashboardBuilt();
const db = await testDatabase();

before(async () => {
  server = await startServer({
    DATABASE_URL: db.url,
    POSTLINE_DATA_DIR: mkdtempSync(join(tmpdir(), 'postline-e2e-x-')),
    POSTLINE_SECRET: 'e2e-secret-0123456789abcdef0123',
    POSTLINE_FBL_SECRET: 'fbl_e2e-secret-0123456789',
    POSTLINE_DELIVERY: 'capture',
    POSTLINE_WEBHOOK_ALLOW_PRIVATE: 'true',
  });
  browser = await launchBrowser();
  page = await (await newContext(browser)).newPage();
  page.setDefaultTimeout(60_000);
  problems.watch(page);
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

async function api(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${server.baseUrl}/api/v1${path}`, {
    method, headers: { authorization: `Bearer ${liveKey}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
  });
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${await res.clone().text()}`);
  return (await res.json()) as Record<string, unknown>;
}

function step(name: string, fn: () => Promise<void>): void {
  test(name, async () => {
    try {
      await fn();
    } catch (err) {
      const text = page ? await page.locator('main').innerText({ timeout: 5000 }).catch(() => '') : '';
      throw new Error(`${(err as Error).message}\n--- at ${page?.url()}\n--- page:\n${text.slice(0, 1200)}\n--- problems:\n${problems.take().join('\n')}`);
    }
  });
}

const noProblems = (where: string) => assert.deepEqual(problems.take(), [], `problems on ${where}`);

step('navigation is grouped into Sending, Audience and Settings; the JS bundle arrives compressed', async () => {
  const link = /sign in once with (\S+)/.exec(server.output())?.[1];
  assert.ok(link);
  const encodings: string[] = [];
  page.on('response', (r) => { if (/\/assets\/index-.*\.js$/.test(r.url())) encodings.push(r.headers()['content-encoding'] ?? 'none'); });
  await page.goto(link);
  await page.waitForURL(/\/settings\/account$/);
  const nav = page.getByRole('navigation', { name: 'Main' });
  for (const group of ['Sending', 'Audience', 'Settings']) await nav.getByRole('heading', { name: group }).waitFor();
  assert.equal(await nav.getByRole('list', { name: 'Settings' }).getByRole('link', { name: 'API keys' }).count(), 1, 'Settings → API keys');
  assert.deepEqual(encodings, ['br']);
  await page.goto(`${server.baseUrl}/settings/keys`);
  await page.getByLabel('Name', { exact: true }).fill('e2e');
  await page.getByRole('button', { name: 'Create live key' }).click();
  liveKey = (await page.getByTestId('new-key').textContent()) ?? '';
  assert.match(liveKey, /^sk_live_/);
  noProblems('keys');
});

step('domains: development mode offers "Mark verified" beside Verify, and a verified domain stops asking to press Verify', async () => {
  const d = await api('POST', '/domains', { name: 'e2e-shop.test' });
  ids.domain = d.id as string;
  await page.goto(`${server.baseUrl}/settings/domains/${ids.domain}`);
  await page.getByTestId('domain-state').filter({ hasText: 'press Verify' }).waitFor();
  await page.getByRole('button', { name: 'Mark verified (development)' }).click();
  await page.getByTestId('domain-state').filter({ hasText: /^Verified: mail from e2e-shop\.test/ }).waitFor();
  assert.equal(await page.getByRole('button', { name: 'Mark verified (development)' }).count(), 0);
  assert.equal(await page.locator('main').getByText(/temp error|press Verify/).count(), 0);
  noProblems('domain');
});

step('lists: the count follows an import without a reload, in the right plural', async () => {
  const l = await api('POST', '/lists', { name: 'Newsletter' });
  ids.list = l.id as string;
  await api('POST', '/subscribers', { email: 'grace@example.net', name: 'Grace', attributes: { plan: 'pro' }, list: ids.list });
  await page.goto(`${server.baseUrl}/lists/${ids.list}`);
  await page.getByTestId('list-count').filter({ hasText: /^1 subscriber ·/ }).waitFor();
  await page.getByLabel('…or paste CSV').fill('email,name\nada@example.net,Ada\nlin@example.net,Lin\n');
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  await page.getByTestId('import-status').filter({ hasText: /^Done: 2 created/ }).waitFor();
  await page.getByTestId('list-count').filter({ hasText: /^3 subscribers ·/ }).waitFor();
  noProblems('list');
});

step('subscribers: a row opens the subscriber page with attributes, lists and a timeline of messages and events', async () => {
  await api('POST', '/emails', { to: 'grace@example.net', from: { email: 'hi@e2e-shop.test' }, subject: 'Hello {{ subscriber.name }}', text: 'x' });
  await page.goto(`${server.baseUrl}/subscribers`);
  await page.getByRole('link', { name: 'grace@example.net' }).click();
  await page.waitForURL(/\/subscribers\/sub_/);
  ids.subscriber = page.url().split('/').pop()!;
  await page.getByTestId('subscriber-attributes').getByText('pro').waitFor();
  await page.getByTestId('subscriber-lists').getByRole('link', { name: 'Newsletter' }).waitFor();
  await page.getByTestId('subscriber-timeline').getByRole('link', { name: 'Hello Grace' }).first().waitFor();
  await page.getByTestId('subscriber-timeline').getByText(/· sent ·/).waitFor();
  noProblems('subscriber');
});

step('templates: HTML in a highlighting code editor, unknown merge fields named beside it, a preview as a chosen subscriber in a sandboxed frame', async () => {
  const t = await api('POST', '/templates', { name: 'Welcome', subject: 'Hi {{ subscriber.name | friend }}', html: '<p>Hi</p>' });
  ids.template = t.id as string;
  await page.goto(`${server.baseUrl}/templates/${ids.template}`);
  const editor = page.getByTestId('code-editor');
  await editor.locator('.cm-editor').waitFor();
  await page.getByLabel('HTML', { exact: true }).fill('<h1 class="x">Hello {{ subscriber.nmae }} on {{ subscriber.attributes.plan }}</h1>');
  assert.ok(await editor.locator('.cm-line span').count() > 0, 'the HTML is highlighted');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.getByTestId('save-warnings').filter({ hasText: 'did you mean subscriber.name?' }).waitFor();
  await page.getByLabel('Preview as subscriber (email or id, optional)').fill('grace@example.net');
  const frame = page.frameLocator('iframe[title="HTML preview"]');
  await frame.getByText('Hello on pro').waitFor();
  await page.getByTestId('preview-warnings').filter({ hasText: '{{ subscriber.nmae }}' }).waitFor();
  assert.equal(await page.locator('iframe[title="HTML preview"]').getAttribute('sandbox'), '');
  await page.getByLabel('Mobile (375 px)').check();
  assert.equal(Math.round((await page.locator('iframe[title="HTML preview"]').boundingBox())!.width), 375);
  noProblems('template');
});

step('campaigns: a draft shows its audience size and a preview for a chosen subscriber, Edit saves in place, Send asks with the count', async () => {
  const c = await api('POST', '/campaigns', {
    name: 'November news', from: { email: 'news@e2e-shop.test' }, audience: { lists: [ids.list] },
    subject: 'News for {{ subscriber.name | you }}', html: '<p>Hi {{ subscriber.name | there }}, plan {{ subscriber.attributes.plan | free }}</p>',
  });
  ids.campaign = c.id as string;
  await page.goto(`${server.baseUrl}/campaigns/${ids.campaign}`);
  await page.getByTestId('audience-size').filter({ hasText: 'Sending now reaches 3 recipients' }).waitFor();
  await page.getByLabel(/^Preview as subscriber/).fill('grace@example.net');
  await page.getByRole('button', { name: 'Show' }).click();
  await page.getByTestId('preview-recipient').filter({ hasText: 'Grace <grace@example.net>' }).waitFor();
  await page.frameLocator('iframe[title="Campaign preview"]').getByText('Hi Grace, plan pro').waitFor();
  await page.getByRole('button', { name: 'Edit' }).click();
  await page.getByLabel('Subject line').fill('News for {{ subscriber.nmae }}');
  await page.getByRole('button', { name: 'Save draft' }).click();
  await page.getByTestId('edit-warnings').filter({ hasText: '{{ subscriber.nmae }}' }).waitFor();
  await page.getByTestId('campaign-warnings').filter({ hasText: '{{ subscriber.nmae }}' }).waitFor();
  await page.getByLabel('Subject line').fill('News for {{ subscriber.name | you }}');
  await page.getByRole('button', { name: 'Save draft' }).click();
  await page.getByTestId('campaign-preview-subject').filter({ hasText: 'News for Grace' }).waitFor();
  const draftShot = screenshotPath('x-campaign-draft-1280');
  await page.screenshot({ path: draftShot, fullPage: true });
  mkdirSync(DOCS_SHOTS, { recursive: true });
  copyFileSync(draftShot, join(DOCS_SHOTS, 'campaign-draft-1280.png'));
  await page.getByRole('button', { name: 'Send now' }).click();
  const confirmation = page.getByTestId('send-confirmation');
  await confirmation.getByText('Send this campaign to 3 recipients?').waitFor();
  await confirmation.getByRole('button', { name: 'Send to 3 recipients' }).click();
  await page.getByRole('heading', { name: /November news/ }).getByText(/sending|sent/).waitFor();
  noProblems('campaign');
});

step('overview: the quota card counts this month\'s messages; rates do not wrap; a chart of one hour is drawn as bars', async () => {
  await page.goto(`${server.baseUrl}/`);
  await page.getByTestId('quota-used').filter({ hasText: /^[1-9]\d* messages? this month; no limit\.$/ }).waitFor();
  const rate = page.getByTestId('overview-stats').locator('.rate').first();
  const whiteSpace = await rate.evaluate((el: unknown) => (globalThis as unknown as { getComputedStyle: (e: unknown) => { whiteSpace: string } }).getComputedStyle(el).whiteSpace);
  assert.equal(whiteSpace, 'nowrap');
  assert.match((await rate.textContent()) ?? '', /^\d+\.\d\u00a0%/);
  await page.goto(`${server.baseUrl}/campaigns/${ids.campaign}`);
  await page.getByRole('heading', { name: /November news/ }).getByText('sent').waitFor({ timeout: 120_000 });
  await page.reload();
  await page.getByTestId('chart-bars').first().waitFor();
  noProblems('overview');
});

step('editors speak in words: steps, branches and comparisons, not paths and operator codes', async () => {
  await page.goto(`${server.baseUrl}/automations/new`);
  await page.getByLabel('Kind of step to add to the workflow', { exact: true }).waitFor();
  const text = await page.locator('main').innerText();
  assert.doesNotMatch(text, /steps\[\d|New step in|\bnot_within\b|\beq\b/);
  await page.getByLabel('Kind of step to add to the workflow', { exact: true }).selectOption('condition');
  await page.getByRole('button', { name: 'Add a step to the workflow', exact: true }).click();
  await page.getByRole('button', { name: 'Add condition' }).last().click();
  const options = await page.getByLabel('Comparison 1').last().locator('option').allTextContents();
  assert.ok(options.includes('is') && options.includes('is not within the last (days)'), options.join(', '));
  await page.getByRole('group', { name: /^Step \d+: Check a condition/ }).first().waitFor();
  noProblems('automation editor');
});

step('Deliverability: an empty state that says what will appear, then a suspended provider with its reply, picked up by the refresh', async () => {
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(`${server.baseUrl}/`);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Deliverability' }).click();
  await page.getByRole('heading', { name: 'Deliverability', level: 1 }).waitFor();
  await page.getByText('No delivery in the last hour.').waitFor();
  // This server's policy names no source addresses: the sources say so.
  await page.getByText('No fixed sending addresses.').waitFor();
  assert.equal(await page.getByTestId('sending-sources').count(), 0);
  // The shaping module's own throttle, as a worker records a 421 from Gmail; the open page refreshes on its own.
  const now = new Date();
  await throttleDestination(db.pool, {
    destination: 'gmail', source: '', provider: 'gmail', now, until: new Date(now.getTime() + 600_000),
    reply: '421-4.7.28 Our system has detected an unusual rate of unsolicited mail', decrease: 0.5,
  });
  const row = page.getByTestId('delivery-status').getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'gmail' }) });
  await row.waitFor({ timeout: 15_000 });
  const text = await row.innerText();
  assert.match(text, /Suspended until/);
  assert.match(text, /unusual rate of unsolicited mail/);
  assert.match(text, /0 of \d+/, 'connections of the limit');
  assert.match(text, /\d+ \/ min/, 'the per-minute limit');
  noProblems('deliverability');
});

step('the main pages: axe finds nothing serious, no sideways scroll; screenshots into docs/dashboard/', async () => {
  const pages: [string, string][] = [
    ['overview', '/'], ['template', `/templates/${ids.template}`], ['campaign-sent', `/campaigns/${ids.campaign}`], ['subscriber', `/subscribers/${ids.subscriber}`],
    ['list', `/lists/${ids.list}`], ['domain', `/settings/domains/${ids.domain}`], ['automation-new', '/automations/new'],
    ['deliverability', '/deliverability'], ['keys', '/settings/keys'],
  ];
  mkdirSync(DOCS_SHOTS, { recursive: true });
  const failures: string[] = [];
  for (const [name, path] of pages) {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${server.baseUrl}${path}`);
    await page.locator('main h1').first().waitFor();
    await page.waitForLoadState('networkidle');
    await page.locator('.loading').waitFor({ state: 'detached' });
    for (const v of await axeViolations(page)) failures.push(`${name}: ${v}`);
    const shot = screenshotPath(`x-${name}-1280`);
    await page.screenshot({ path: shot, fullPage: true });
    copyFileSync(shot, join(DOCS_SHOTS, `${name}-1280.png`));
    await page.setViewportSize({ width: 390, height: 900 });
    if (name === 'domain') {
      const narrow = screenshotPath('x-domain-390');
      await page.screenshot({ path: narrow, fullPage: true });
      copyFileSync(narrow, join(DOCS_SHOTS, 'domain-390.png'));
    }
    const overflow = await sidewaysOverflow(page);
    if (overflow > 0) failures.push(`${name} at 390px scrolls sideways by ${overflow}px`);
    failures.push(...problems.take());
  }
  assert.deepEqual(failures, []);
});
