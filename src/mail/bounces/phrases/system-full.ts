import type { PhraseFamily } from './phrase.js';

/** The receiving system (not the mailbox) is out of storage: recipient side, soft. */
export const systemFull: PhraseFamily = {
  reason: 'system_full',
  phrases: [
    { re: /insufficient system (?:storage|resources)/i, example: '452 4.3.1 Insufficient system storage' },
    { re: /(?:disk|file ?system|system storage|mail system) (?:is )?full|no space left|out of (?:disk|memory)/i, example: '451 4.3.1 Mail system full, please retry later' },
  ],
};
