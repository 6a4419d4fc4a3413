import type { FastifyInstance } from 'fastify';
import { campaignRoutes } from './campaigns.js';
import { automationRoutes } from './automations/index.js';
import { importRoutes } from './imports.js';
import { listRoutes } from './lists.js';
import { segmentRoutes } from './segments.js';
import { statsRoutes } from './stats.js';
import { subscriberRoutes } from './subscribers.js';
import { capturedRoutes } from './captured.js';
import { domainRoutes } from './domains.js';
import { emailRoutes } from './emails.js';
import { emailRawRoutes } from './email-raw.js';
import { hookRoutes } from './hooks.js';
import { keyRoutes } from './keys.js';
import { meRoutes } from './me.js';
import { accountHealthRoutes } from './account-health.js';
import { deliverabilityRoutes } from './deliverability.js';
import { deliveryStatusRoutes } from './delivery-status.js';
import { sessionRoutes } from './session.js';
import { userRoutes } from './users.js';
import { suppressionRoutes } from './suppression.js';
import { templateRoutes } from './templates.js';

/** Every /api/v1 resource. Each feature adds its module here. */
export async function v1Routes(app: FastifyInstance): Promise<void> {
  await app.register(meRoutes);
  await app.register(accountHealthRoutes);
  await app.register(deliverabilityRoutes);
  await app.register(deliveryStatusRoutes);
  await app.register(sessionRoutes);
  await app.register(userRoutes);
  await app.register(keyRoutes);
  await app.register(domainRoutes);
  await app.register(emailRoutes);
  await app.register(emailRawRoutes);
  await app.register(capturedRoutes);
  await app.register(templateRoutes);
  await app.register(suppressionRoutes);
  await app.register(hookRoutes);
  await app.register(listRoutes);
  await app.register(subscriberRoutes);
  await app.register(importRoutes);
  await app.register(segmentRoutes);
  await app.register(campaignRoutes);
  await app.register(statsRoutes);
  await app.register(automationRoutes);
}
