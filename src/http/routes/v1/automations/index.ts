import type { FastifyInstance } from 'fastify';
import { automationDefinitionRoutes } from './definitions.js';
import { automationRunRoutes } from './runs.js';

/** /api/v1/automations: definitions, the trigger, runs. */
export async function automationRoutes(app: FastifyInstance): Promise<void> {
  await app.register(automationDefinitionRoutes);
  await app.register(automationRunRoutes);
}
