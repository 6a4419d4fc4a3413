import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import type { Pool } from '../../src/db/pool.js';
import { createVerifiedDomain } from '../helpers/domains.js';
import type { TestAccount } from '../helpers/app.js';
import type { Config } from '../../src/config.js';
import { client, type Json } from '../audience/helpers.js';

export { client, type Json };

/** An account ready to run automations: a verified sender domain and a template. */
export async function automationAccount(app: FastifyInstance, pool: Pool, config: Config, account: TestAccount, domain = 'acme.test') {
  await createVerifiedDomain(pool, account.accountId, domain, config.secret);
  const api = client(app, account.live);
  const tpl = await api.post('/api/v1/templates', { name: 'Welcome', subject: 'Welcome {{ subscriber.name | friend }}', html: '<p>Hi {{ data.plan | there }}</p>' });
  assert.equal(tpl.status, 201, JSON.stringify(tpl.body));
  return { api, templateId: tpl.body.id as string, from: { email: `hello@${domain}`, name: 'Acme' } };
}

/** Creates an automation and returns its body (asserting 201). */
export async function makeAutomation(api: ReturnType<typeof client>, body: Record<string, unknown>): Promise<Json> {
  const res = await api.post('/api/v1/automations', { name: 'A', ...body });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

import { runDueAutomations } from '../../src/domain/automations/engine.js';
import { handleAutomationEvents } from '../../src/domain/automations/events.js';
import { runPendingTriggers } from '../../src/domain/automations/pending.js';
import { subscriberWritesForAutomations } from '../../src/domain/audience/subscribers.js';
import { TrackingLinks } from '../../src/domain/tracking/links.js';
import type { Clock } from '../../src/clock.js';

/** Runs the engine and the event handler until nothing is due: what the worker loops do. */
export function engineOf(pool: Pool, config: Config, clock: Clock) {
  const deps = { pool, config, links: new TrackingLinks(config), now: () => clock.now(), subscribers: subscriberWritesForAutomations };
  return async function drain(): Promise<void> {
    for (let i = 0; i < 100; i++) {
      const a = await runDueAutomations(deps);
      const b = await handleAutomationEvents(pool, deps.now);
      const c = await runPendingTriggers(pool, deps.now);
      if (a === 0 && b === 0 && c === 0) return;
    }
    throw new Error('automations did not settle');
  };
}

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
