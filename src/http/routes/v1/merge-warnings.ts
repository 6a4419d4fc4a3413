import { Type } from 'typebox';

/**
 * `warnings` on a 2xx answer: merge fields that will render empty or unexpectedly
 * (docs/templates.md, "Merge fields"). The request succeeded; these say what to look at.
 */
export const MergeWarnings = Type.Array(
  Type.Object({
    field: Type.String({ description: 'The placeholder\'s path, e.g. subscriber.nmae' }),
    message: Type.String({ description: 'What is wrong with it, in a sentence' }),
  }),
  { description: 'Placeholders that will render empty or the fallback: unknown subscriber fields, attributes no recipient has, values missing at send time. Empty when all is well.' },
);
