import type { FastifyInstance } from 'fastify';
import { meRoutes } from './me.js';

/** Every /api/v1 resource. Each feature adds its module here. */
export async function v1Routes(app: FastifyInstance): Promise<void> {
  await app.register(meRoutes);
}
