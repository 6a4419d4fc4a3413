import type { PhraseFamily } from './phrase.js';

/** The receiving system failed (loops, internal errors, misconfiguration): recipient side, soft. */
export const systemError: PhraseFamily = {
  reason: 'system_error',
  phrases: [
    { re: /system (?:error|failure|problem)|internal (?:server )?(?:error|failure)|local error|processing error|error (?:in|while) processing/i, example: '451 4.3.0 Internal server error, please retry' },
    { re: /temporar(?:y|ily) (?:failure|problem|error|unavailable|rejected|not available)|transient/i, example: '451 4.3.0 Mail server temporarily rejected message' },
    { re: /(?:mail )?loop(?:s|ing)? (?:back|detected)|routing loop|too many (?:hops|received headers)|hop count exceeded/i, example: '554 5.4.6 Hop count exceeded - possible mail loop' },
    { re: /server (?:error|failure|busy|unavailable)|service (?:is )?(?:unavailable|not available)/i, example: '554 5.0.0 Service unavailable' },
    { re: /configuration (?:error|problem)|misconfigur|resources? (?:temporarily )?unavailable|try again|database|backend/i, example: '451 4.3.5 Server configuration problem' },
  ],
};
