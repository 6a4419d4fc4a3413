import { Type } from 'typebox';
import { SandboxFlag } from './common-schemas.js';

/** The subscriber as the audience routes (subscribers, segments, lists) answer it. */

export const SubscriberStatusSchema = Type.Union(
  [Type.Literal('active'), Type.Literal('unconfirmed'), Type.Literal('unsubscribed'), Type.Literal('bounced'), Type.Literal('complained')],
  { description: 'active; unconfirmed (double opt-in pending); unsubscribed, bounced, complained (also imposed by a suppression)' },
);

export const Attributes = Type.Record(Type.String(), Type.Unknown(), { description: 'Free-form JSON object of custom fields (merge fields, segment conditions)' });

export const SubscriberSchema = Type.Object({
  id: Type.String({ description: 'sub_…; time-ordered, never reused' }),
  email: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  status: SubscriberStatusSchema,
  attributes: Attributes,
  lists: Type.Array(Type.String(), { description: 'Ids of the lists the subscriber is in' }),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  sandbox: SandboxFlag,
});

export const subscriberExample = {
  id: 'sub_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10',
  email: 'ada@example.com',
  name: 'Ada Lovelace',
  status: 'active',
  attributes: { plan: 'pro', signupSource: 'webinar' },
  lists: ['lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01'],
  createdAt: '2026-11-20T10:15:30.123Z',
  updatedAt: '2026-11-20T10:15:30.123Z',
};
