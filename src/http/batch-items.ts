import type { FastifyRequest } from 'fastify';
import { findTextProblems } from '../domain/text.js';
import { AppError, type FieldError } from '../errors.js';

interface SchemaError {
  instancePath?: string;
  message?: string;
  keyword?: string;
  params?: Record<string, unknown>;
}

function fieldOf(rest: string, e: SchemaError): string {
  let path = rest.replace(/^\//, '').replaceAll('/', '.');
  for (const extra of [e.params?.missingProperty, e.params?.additionalProperty]) {
    if (typeof extra === 'string') path = path ? `${path}.${extra}` : extra;
  }
  return path || 'item';
}

function refusal(errors: FieldError[]): AppError {
  return new AppError('validation_failed', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });
}

/**
 * For routes that answer each item of `body[key]` on its own (`attachValidation: true` and
 * `config.bodyTextCheckedByHandler: [key]`): the items refused by the schema or by the text
 * rule (domain/text.ts), by index, each with a validation_failed naming the item's fields.
 * A problem outside the items (the array missing, too long, an unknown top-level field) is
 * the whole request's: thrown as the usual 422.
 */
export function batchItemProblems(request: FastifyRequest, key: string): Map<number, AppError> {
  const perItem = new Map<number, FieldError[]>();
  const add = (index: number, e: FieldError) => perItem.set(index, [...(perItem.get(index) ?? []), e]);
  const itemPath = new RegExp(`^/${key}/(\\d+)(/.*)?$`);
  if (request.validationError) {
    const validation = (request.validationError as { validation?: SchemaError[] }).validation ?? [];
    const whole = validation.filter((e) => !itemPath.test(e.instancePath ?? ''));
    if (whole.length > 0 || validation.length === 0) throw request.validationError;
    for (const e of validation) {
      const m = itemPath.exec(e.instancePath ?? '')!;
      const message = e.keyword === 'additionalProperties' ? 'is not a known field' : (e.message ?? 'is invalid');
      const field = fieldOf(m[2] ?? '', e);
      if (!perItem.get(Number(m[1]))?.some((x) => x.field === field && x.message === message)) add(Number(m[1]), { field, message });
    }
  }
  const items = (request.body as Record<string, unknown>)[key] as unknown[];
  items.forEach((item, index) => {
    if (!perItem.has(index)) for (const e of findTextProblems(item)) add(index, { ...e, field: e.field === 'body' ? 'item' : e.field });
  });
  return new Map([...perItem].map(([index, errors]) => [index, refusal(errors)]));
}
