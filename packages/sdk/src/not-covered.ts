import type { OperationId } from './generated/operations.js';

/**
 * Operations of the OpenAPI document the SDK leaves out on purpose, each with why: they are
 * not called with an API key. Every other operation must have a resource method;
 * test/sdk/coverage.test.ts fails otherwise (and when an entry here no longer exists).
 */
export const NOT_COVERED: Partial<Record<OperationId, string>> = {
  signIn: 'the dashboard\'s session cookie, for people in a browser',
  getSession: 'the dashboard\'s session cookie, for people in a browser',
  signOut: 'the dashboard\'s session cookie, for people in a browser',
  reportComplaint: 'the complaint (FBL) intake: mailbox providers post ARF reports with the FBL key',
  confirmSubscription: 'the double opt-in link a subscriber opens in a browser',
};
