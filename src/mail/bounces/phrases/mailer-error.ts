import type { PhraseFamily } from './phrase.js';

/** The receiver's local delivery program failed (a pipe, procmail, a Sieve script): recipient side, soft. */
export const mailerError: PhraseFamily = {
  reason: 'mailer_error',
  phrases: [
    { re: /mailer error|mail(?:er)? program (?:\S+ )?(?:failed|returned)|local delivery program failed/i, example: 'Mailer error: program /usr/local/bin/deliver-mail returned 75' },
    { re: /x-unix; ?\d+|command (?:died|exited|failed) with (?:status|code)|exit (?:code|status) \d+/i, example: 'X-Unix; 255' },
    { re: /pipe to \|?\S+ (?:failed|returned)|procmail:|sieve (?:script )?(?:error|failed)/i, example: 'pipe to |/usr/bin/procmail failed: exit code 73' },
  ],
};
