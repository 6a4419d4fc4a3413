/**
 * The browser-test harness: the real server (`postline start`, as `npm start` runs it) on
 * loopback against a fresh database, headless Chromium driven by playwright-core, and the
 * checks every page gets: no console error or failed request, axe-core without serious or
 * critical violations, no sideways scroll at 1280 px and 390 px, and a screenshot of each.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startCli } from '../helpers/cli.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const SCREENSHOT_DIR = join(ROOT, 'test-output', 'screenshots');

const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-zygote',
];

const HOW_TO_INSTALL = 'Install a Chromium for the browser tests: `npm ci` installs @sparticuz/chromium (a Chromium inside an npm package); '
  + 'or `apt-get install chromium` (Debian, /usr/bin/chromium); or point POSTLINE_CHROMIUM at a Chrome/Chromium binary.';

/** A Chromium from a registry: POSTLINE_CHROMIUM, else @sparticuz/chromium (npm), else Debian's /usr/bin/chromium. Never a silent skip. */
export async function chromiumPath(): Promise<string> {
  const explicit = process.env.POSTLINE_CHROMIUM;
  if (explicit) {
    if (!existsSync(explicit)) throw new Error(`POSTLINE_CHROMIUM=${explicit} does not exist. ${HOW_TO_INSTALL}`);
    return explicit;
  }
  const problems: string[] = [];
  try {
    const { default: packaged } = await import('@sparticuz/chromium');
    const path = await packaged.executablePath();
    if (existsSync(path)) return path;
    problems.push(`@sparticuz/chromium gave ${path}, which does not exist`);
  } catch (err) {
    problems.push(`@sparticuz/chromium: ${(err as Error).message}`);
  }
  if (existsSync('/usr/bin/chromium')) return '/usr/bin/chromium';
  throw new Error(`No Chromium found for the browser tests (${problems.join('; ')}; no /usr/bin/chromium). ${HOW_TO_INSTALL}`);
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: await chromiumPath(), headless: true, args: CHROMIUM_ARGS });
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const s = statSync(p);
    newest = Math.max(newest, s.isDirectory() ? newestMtime(p) : s.mtimeMs);
  }
  return newest;
}

/** `npm ci` builds web/dist (prepare → build); rebuild here only when a source is newer than the build. */
export function ensureDashboardBuilt(): void {
  const index = join(ROOT, 'web', 'dist', 'index.html');
  const sources = Math.max(newestMtime(join(ROOT, 'web', 'src')), statSync(join(ROOT, 'web', 'index.html')).mtimeMs);
  if (existsSync(index) && statSync(index).mtimeMs >= sources) return;
  const r = spawnSync('npm', ['run', 'build:web', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('npm run build:web failed');
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

export interface RunningServer {
  baseUrl: string;
  output: () => string;
  stop: () => Promise<void>;
}

/** `postline start` (API, workers, inbound SMTP) on 127.0.0.1, as `npm start` runs it. */
export async function startServer(env: Record<string, string>): Promise<RunningServer> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const { child, output } = await startCli(['start'], {
    PORT: String(port), HOST: '127.0.0.1', POSTLINE_BASE_URL: baseUrl, POSTLINE_SMTP_PORT: '0', LOG_LEVEL: 'warn', ...env,
  }, /postline ready/);
  return {
    baseUrl,
    output,
    stop: () => new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}

/** Everything that went wrong in the page: console errors, uncaught exceptions, failed or erroring requests. */
export class PageProblems {
  private readonly seen: string[] = [];
  private allowed: RegExp[] = [];
  private arrived = new Set<RegExp>();
  private onArrival: (() => void) | null = null;

  watch(page: Page): void {
    page.on('console', (m) => {
      if (m.type() !== 'error') return;
      // Chrome logs every 4xx/5xx answer once more as a console error without its URL; the
      // response listener below already records it with method and URL, so the copy is left out
      // (two expected 422s gave two identical console lines, and the second could arrive after
      // the expected window had closed).
      if (/^Failed to load resource: the server responded with a status of \d+/.test(m.text())) return;
      this.add(`console error: ${m.text()}`);
    });
    page.on('pageerror', (e) => this.add(`uncaught: ${e.message}`));
    page.on('requestfailed', (r) => {
      // A navigation away cancels requests still in flight; that is not a failure of the app.
      if (r.failure()?.errorText === 'net::ERR_ABORTED') return;
      this.add(`request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText}`);
    });
    page.on('response', (r) => { if (r.status() >= 400) this.add(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`); });
  }

  private add(s: string): void {
    const match = this.allowed.filter((re) => re.test(s));
    if (match.length === 0) return void this.seen.push(s);
    for (const re of match) this.arrived.add(re);
    this.onArrival?.();
  }

  /**
   * Runs `fn` during which problems matching `patterns` are expected (a deliberate 422, say),
   * then waits until each pattern has been seen: the events of the page reach the test
   * asynchronously, and one arriving after the window closed would count as a failure later.
   */
  async expecting<T>(patterns: RegExp[], fn: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
    this.allowed = patterns;
    this.arrived = new Set();
    try {
      const result = await fn();
      await new Promise<void>((resolve, reject) => {
        const check = () => {
          if (patterns.every((p) => this.arrived.has(p))) {
            clearTimeout(timer);
            this.onArrival = null;
            resolve();
          }
        };
        const timer = setTimeout(() => {
          this.onArrival = null;
          reject(new Error(`expected page problems never arrived: ${patterns.filter((p) => !this.arrived.has(p)).join(', ')}`));
        }, timeoutMs);
        this.onArrival = check;
        check();
      });
      return result;
    } finally {
      this.allowed = [];
    }
  }

  take(): string[] {
    return this.seen.splice(0);
  }
}

let axeSource: string | undefined;

/** axe-core's serious and critical violations on the page as it is now. */
export async function axeViolations(page: Page): Promise<string[]> {
  axeSource ??= readFileSync(join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
  await page.addScriptTag({ content: axeSource });
  // A string, so this file needs no DOM typings: it runs in the page.
  const violations = await page.evaluate<{ id: string; impact: string; help: string; targets: string[] }[]>(`(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
  })()`);
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.impact} ${v.id}: ${v.help} (${v.targets.join(', ')})`);
}

/** Content wider than the viewport means the person has to scroll sideways. */
export async function sidewaysOverflow(page: Page): Promise<number> {
  return page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
}

export async function newContext(browser: Browser, width = 1280): Promise<BrowserContext> {
  // bypassCSP lets the test inject axe-core; the app itself runs under its CSP otherwise.
  return browser.newContext({ viewport: { width, height: 900 }, bypassCSP: true, permissions: [] });
}

export function screenshotPath(name: string): string {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return join(SCREENSHOT_DIR, `${name}.png`);
}
