import type { BounceReason } from '../reasons.js';

/**
 * One entry of a phrase table: a pattern and the realistic diagnostic it was written from
 * (test/mail/bounces/phrases.test.ts checks that every example matches its pattern and is
 * classified as its family's reason, so a table cannot drift from its examples).
 *
 * `weak`: wording that servers also use loosely ("mailbox unavailable", "address rejected").
 * A weak phrase decides only when the enhanced status says nothing (absent, x.0.0); a
 * telling status wins over it (./../classify.ts).
 */
export interface Phrase {
  re: RegExp;
  example: string;
  weak?: true;
}

/** One file per family: the reason its phrases give. */
export interface PhraseFamily {
  reason: BounceReason;
  phrases: readonly Phrase[];
}

/** A vendor's own status token (Exchange's RESOLVER.ADR.*, Outlook.com's S3150…): the MTA's dialect. */
export interface DialectToken extends Phrase {
  reason: BounceReason;
  /** Which MTA or provider says it. */
  mta: string;
}
