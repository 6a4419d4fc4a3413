import { after } from 'node:test';
import { authenticate } from 'mailauth';
import pino from 'pino';
import type { Response as LightMyRequestResponse } from 'light-my-request';
import type { Clock } from '../../src/clock.js';
import { createDomain, dnsTargetsOf, forceVerifyDomain } from '../../src/domain/domains/domains.js';
import { createResolver, toMailauthResolver } from '../../src/mail/dns.js';
import { DeliveryEngine, DEFAULT_DELIVERY_OPTIONS, type DeliveryOptions } from '../../src/delivery/engine.js';
import { CampaignRenderer } from '../../src/domain/campaigns/content.js';
import { bootApp, createTestAccount, type TestAccount, type TestApp } from './app.js';
import { startDnsServer, type TestDnsServer } from './dns-server.js';
import { startSmtpMx, type SmtpMxOptions, type TestSmtpMx } from './smtp-mx.js';

export const SENDER_DOMAIN = 'acme.test';
export const RECIPIENT_DOMAIN = 'example.net';

export interface MailEnv extends TestApp {
  dns: TestDnsServer;
  mx: TestSmtpMx;
  acme: TestAccount;
  domainId: string;
  engine: DeliveryEngine;
  /** A second engine, as another worker process would be. */
  newEngine(opts?: Partial<DeliveryOptions>): DeliveryEngine;
  send(body: Record<string, unknown>, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  /** Runs delivery until nothing is due (at the clock's current time). */
  deliverAll(engine?: DeliveryEngine): Promise<number>;
  /** mailauth's verdict on bytes the MX received, with keys fetched through the test DNS server. */
  verifyDkim(raw: Buffer): Promise<{ domain: string; result: string; algo: string }[]>;
}

/**
 * Everything a sending test needs, all real: a loopback DNS server serving the sender's DKIM
 * records and the recipient domain's MX, a loopback SMTP server as that MX, the production app
 * on its own database, an account with a verified domain, and a delivery engine.
 */
export async function startMailEnv(opts: { clock?: Clock; env?: Record<string, string>; mx?: SmtpMxOptions } = {}): Promise<MailEnv> {
  const [dns, mx] = await Promise.all([startDnsServer(), startSmtpMx(opts.mx)]);
  after(() => Promise.all([dns.close(), mx.close()]));
  const t = await bootApp({
    clock: opts.clock,
    env: { POSTLINE_DELIVERY: 'mx', POSTLINE_DNS_SERVERS: dns.address, POSTLINE_MX_PORT: String(mx.port), POSTLINE_BASE_URL: 'https://postline.test', ...opts.env },
  });
  const acme = await createTestAccount(t.pool, 'Acme');
  const domain = await createDomain(t.pool, { accountId: acme.accountId, name: SENDER_DOMAIN, now: t.clock.now() }, { secret: t.config.secret, targets: dnsTargetsOf(t.config) });
  for (const r of domain.records) {
    if (r.type === 'TXT') dns.setRecords(r.name, 'TXT', [r.value]);
  }
  await forceVerifyDomain(t.pool, domain.id, t.clock.now());
  dns.setRecords(RECIPIENT_DOMAIN, 'MX', [{ exchange: `mx.${RECIPIENT_DOMAIN}`, priority: 10 }]);
  dns.setRecords(`mx.${RECIPIENT_DOMAIN}`, 'A', ['127.0.0.1']);

  const log = pino({ level: 'silent' });
  const newEngine = (o: Partial<DeliveryOptions> = {}) => {
    const e = new DeliveryEngine({ pool: t.pool, config: t.config, clock: t.clock, log, content: (links) => new CampaignRenderer(t.pool, links) }, { ...DEFAULT_DELIVERY_OPTIONS, ...o });
    after(() => e.close());
    return e;
  };
  const engine = newEngine();
  const resolver = toMailauthResolver(createResolver([dns.address]));
  return {
    ...t,
    dns,
    mx,
    acme,
    domainId: domain.id,
    engine,
    newEngine,
    send: (body, headers = acme.live) =>
      t.app.inject({ method: 'POST', url: '/api/v1/emails', headers: { ...headers, 'content-type': 'application/json' }, payload: body }),
    async deliverAll(e = engine) {
      let total = 0;
      for (;;) {
        const n = await e.runOnce();
        total += n;
        if (n === 0) return total;
      }
    },
    async verifyDkim(raw) {
      const res = await authenticate(raw, { resolver, ip: '127.0.0.1', helo: 'postline.test', sender: `x@${SENDER_DOMAIN}`, mta: 'mx.example.net', trustReceived: false } as never);
      return (res.dkim.results as unknown as { signingDomain: string; status: { result: string }; algo: string }[]).map((r) => ({ domain: r.signingDomain, result: r.status.result, algo: r.algo }));
    },
  };
}

export const basicEmail = (over: Record<string, unknown> = {}) => ({
  to: `ada@${RECIPIENT_DOMAIN}`,
  from: { email: `hello@${SENDER_DOMAIN}`, name: 'Acme' },
  subject: 'Hello {{ name | there }}',
  html: '<html><body><p>Hi {{ name | there }}, see <a href="https://acme.test/offer?a=1&amp;b=2">our offer</a>.</p></body></html>',
  variables: { name: 'Ada' },
  ...over,
});
