import type { operations } from './generated/openapi.js';
import type { OperationId } from './generated/operations.js';

type Op<Id extends OperationId> = operations[Id];
type JsonOf<T> = T extends { content: { 'application/json': infer B } } ? B : never;

/** The JSON request body of an operation. */
export type Body<Id extends OperationId> = JsonOf<NonNullable<Op<Id>['requestBody']>>;

/** The query parameters of an operation. */
export type Query<Id extends OperationId> = NonNullable<Op<Id>['parameters']['query']>;

type Responses<Id extends OperationId> = Op<Id>['responses'];

/** What a successful call returns: the JSON of its 2xx responses (undefined for a 204). */
export type Result<Id extends OperationId> = {
  [C in keyof Responses<Id>]: C extends 200 | 201 | 202 ? JsonOf<Responses<Id>[C]> : C extends 204 ? undefined : never;
}[keyof Responses<Id>];

/** The item type of a paginated list operation's `data`. */
export type Item<Id extends OperationId> = Result<Id> extends { data: (infer I)[] } ? I : never;

/** Per-call options. */
export interface RequestOptions {
  /** Aborts the call (and its retries). */
  signal?: AbortSignal;
  /** Overrides the client's timeout for each attempt, in milliseconds. */
  timeoutMs?: number;
  /** For POSTs: the Idempotency-Key to send (one is generated per call otherwise). */
  idempotencyKey?: string;
}
