import { Type } from 'typebox';
import { problemResponse } from '../../problem.js';

/** Schemas and problem answers shared by the v1 routes. */

export const SandboxFlag = Type.Optional(Type.Boolean({ description: 'Present (true) when a test key made the request: nothing was stored' }));

export const IdParam = Type.Object({ id: Type.String({ maxLength: 200 }) });

export function notFoundResponse(what: string, id: string) {
  return problemResponse(`No ${what} with this id in this account (ids of other accounts are not found either)`, 'not_found', `${what} ${id} not found`);
}

export function invalidResponse(description: string, field: string, message: string) {
  return problemResponse(description, 'validation_failed', `${field}: ${message}`, [{ field, message }]);
}
