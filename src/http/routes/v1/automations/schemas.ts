import { MergeWarnings } from '../merge-warnings.js';
import { Type } from 'typebox';
import { RULE_FIELDS } from '../../../../domain/automations/rules.js';
import { SandboxFlag } from '../common-schemas.js';

/**
 * Schemas and examples of the automation routes. Steps and rules are recursive; their exact
 * rules are checked by domain/automations/definition.ts, which names the offending path.
 */

export const Rule = Type.Object({}, {
  additionalProperties: true,
  description: `A rule as in segments: {match: "all"|"any", conditions: [{field, op, value} | group]}. Fields: ${RULE_FIELDS.join(', ')}.`,
});

export const Steps = Type.Array(Type.Unknown(), {
  maxItems: 100,
  description: 'Steps, in order: {type:"send", templateId | subject + html/text, from, replyTo?}, {type:"wait", duration} or {type:"wait", until:{event, timeout}}, '
    + '{type:"condition", if, then, else}, {type:"update_subscriber", lists?:{add, remove}, attributes?}, {type:"exit"}. Durations: "30s", "15m", "3h", "2d" (at most 365 days).',
});

const Reentry = Type.Union([Type.Literal('never'), Type.Literal('after_exit'), Type.Literal('always')], {
  description: 'Whether an address may start a new run: never (once ever), after_exit (not while a run of it is in progress; default), always',
});
const Status = Type.Union([Type.Literal('active'), Type.Literal('paused')], { description: 'Only active automations start runs; pausing keeps waiting runs waiting' });
const Trigger = Type.Object({
  event: Type.String({ minLength: 1, maxLength: 100, description: 'Event name: your own (POST /automations/trigger) or built in: subscriber.created, email.opened, email.clicked, subscriber.unsubscribed' }),
  filter: Type.Optional(Type.Union([Rule, Type.Null()])),
});

const SendCounters = Type.Object({
  step: Type.String({ description: 'Path of the send step, e.g. steps[2].then[0]' }),
  sent: Type.Integer(), skipped: Type.Integer({ description: 'Not sent: suppressed or unsubscribed address' }),
  delivered: Type.Integer(), opened: Type.Integer(), clicked: Type.Integer(),
});

export const AutomationSchema = Type.Object({
  id: Type.String({ description: 'aut_…' }),
  name: Type.String(),
  status: Status,
  trigger: Type.Object({ event: Type.String(), filter: Type.Union([Rule, Type.Null()]) }),
  steps: Steps,
  reentry: Reentry,
  counters: Type.Object({
    runsStarted: Type.Integer(), runsCompleted: Type.Integer(), runsExited: Type.Integer(), runsFailed: Type.Integer(),
    runsInProgress: Type.Integer(),
    sends: Type.Array(SendCounters),
  }),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  sandbox: SandboxFlag,
});
/** A create or PATCH answer: the automation and its merge-field warnings. */
export const SavedAutomationSchema = Type.Object({ ...AutomationSchema.properties, warnings: MergeWarnings });

const exampleSteps = [
  { type: 'send', templateId: 'tpl_019a6f0c3b2e7d1a9c4b5e6f7a8b9c30', from: { email: 'hello@acme.com', name: 'Acme' } },
  { type: 'wait', duration: '2d' },
  {
    type: 'condition',
    if: { match: 'all', conditions: [{ field: 'opened', op: 'not_exists' }] },
    then: [{ type: 'send', subject: 'Did you see this, {{ subscriber.name | there }}?', html: '<p>Getting started…</p>', from: { email: 'hello@acme.com' } }],
    else: [],
  },
];

export const automationExample = {
  id: 'aut_019a6f0c3b2e7d1a9c4b5e6f7a8b9c40',
  name: 'Welcome series',
  status: 'active',
  trigger: { event: 'subscriber.created', filter: { match: 'all', conditions: [{ field: 'list', op: 'eq', value: 'lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01' }] } },
  steps: exampleSteps,
  reentry: 'never',
  counters: {
    runsStarted: 120, runsCompleted: 80, runsExited: 2, runsFailed: 0, runsInProgress: 38,
    sends: [
      { step: 'steps[0]', sent: 119, skipped: 1, delivered: 118, opened: 70, clicked: 22 },
      { step: 'steps[2].then[0]', sent: 30, skipped: 0, delivered: 30, opened: 9, clicked: 2 },
    ],
  },
  createdAt: '2026-11-20T10:15:30.123Z',
  updatedAt: '2026-11-20T10:15:30.123Z',
};

export const CreateBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  status: Type.Optional(Status),
  trigger: Trigger,
  steps: Steps,
  reentry: Type.Optional(Reentry),
}, {
  additionalProperties: false,
  examples: [{ name: automationExample.name, trigger: automationExample.trigger, steps: exampleSteps, reentry: 'never' }],
});

export const PatchBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  status: Type.Optional(Status),
  trigger: Type.Optional(Trigger),
  steps: Type.Optional(Steps),
  reentry: Type.Optional(Reentry),
}, { additionalProperties: false, examples: [{ status: 'paused' }] });

// ---------------------------------------------------------------------------------------
// Trigger and runs

export const TriggerBody = Type.Object({
  event: Type.String({ minLength: 1, maxLength: 100, description: 'Event name; starts the active automations triggered by it and wakes runs waiting for it' }),
  email: Type.String({ minLength: 1, maxLength: 254 }),
  data: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Free-form JSON object (at most 32 KB), {{ data.* }} in templates and data.* in rules' })),
}, { additionalProperties: false, examples: [{ event: 'cart.abandoned', email: 'ada@example.com', data: { cartUrl: 'https://shop.example/cart/42', total: 59.9 } }] });

export const TriggerAccepted = Type.Object({
  event: Type.String(),
  email: Type.String(),
  runs: Type.Array(Type.Object({ id: Type.String({ description: 'run_…' }), automationId: Type.String() }), { description: 'Runs started (empty when no active automation matched)' }),
  resumed: Type.Integer({ description: 'Runs that were waiting for this event and resume now' }),
  sandbox: SandboxFlag,
}, { examples: [{ event: 'cart.abandoned', email: 'ada@example.com', runs: [{ id: 'run_019a6f0c3b2e7d1a9c4b5e6f7a8b9c50', automationId: 'aut_019a6f0c3b2e7d1a9c4b5e6f7a8b9c40' }], resumed: 0 }] });

const RunStatus = Type.Union([Type.Literal('active'), Type.Literal('waiting'), Type.Literal('completed'), Type.Literal('exited'), Type.Literal('failed')], {
  description: 'active (steps to perform now), waiting, completed, exited (exit step, unsubscribe, cancel), failed',
});

export const RunSchema = Type.Object({
  id: Type.String({ description: 'run_…' }),
  automationId: Type.String(),
  email: Type.String(),
  data: Type.Record(Type.String(), Type.Unknown()),
  status: RunStatus,
  position: Type.Union([Type.String(), Type.Null()], { description: 'Next step to perform (steps[3].then[0]); null once finished' }),
  waitingFor: Type.Union([Type.String(), Type.Null()], { description: 'Event a "wait until" step waits for' }),
  wakesAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When a waiting run resumes (end of the wait, or the timeout)' }),
  exitReason: Type.Union([Type.String(), Type.Null()]),
  startedAt: Type.String({ format: 'date-time' }),
  finishedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  sandbox: SandboxFlag,
});

export const RunStepSchema = Type.Object({
  step: Type.String({ description: 'Path of the step, e.g. steps[1]' }),
  type: Type.String(),
  outcome: Type.String({ description: 'sent, skipped, waiting, resumed, timed_out, then, else, updated, exited, failed, completed' }),
  detail: Type.Record(Type.String(), Type.Unknown()),
  messageId: Type.Union([Type.String(), Type.Null()]),
  at: Type.String({ format: 'date-time' }),
});

export const runExample = {
  id: 'run_019a6f0c3b2e7d1a9c4b5e6f7a8b9c50',
  automationId: 'aut_019a6f0c3b2e7d1a9c4b5e6f7a8b9c40',
  email: 'ada@example.com',
  data: { cartUrl: 'https://shop.example/cart/42' },
  status: 'waiting',
  position: 'steps[1]',
  waitingFor: 'purchase',
  wakesAt: '2026-11-21T10:15:30.123Z',
  exitReason: null,
  startedAt: '2026-11-20T10:15:30.123Z',
  finishedAt: null,
};

export const RunDetailSchema = Type.Object({ ...RunSchema.properties, steps: Type.Array(RunStepSchema) });

export const runDetailExample = {
  ...runExample,
  steps: [{ step: 'steps[0]', type: 'wait', outcome: 'waiting', detail: { until: 'purchase', timeout: '1d' }, messageId: null, at: '2026-11-20T10:15:30.123Z' }],
};

export const RunsQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 50, description: 'Page size, 1–500' }),
  order: Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'desc', description: 'desc = newest first' }),
  cursor: Type.Optional(Type.String({ maxLength: 200, description: 'nextCursor of the previous page' })),
  status: Type.Optional(RunStatus),
});

export const RunParams = Type.Object({ id: Type.String({ maxLength: 200 }), runId: Type.String({ maxLength: 200 }) });
