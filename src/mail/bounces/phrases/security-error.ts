import type { PhraseFamily } from './phrase.js';

/** TLS or SMTP authentication required, a virus found: sender side. */
export const securityError: PhraseFamily = {
  reason: 'security_error',
  phrases: [
    { re: /authentication (?:is )?required|authenticat(?:e|ion) (?:first|needed)/i, example: '530 5.7.0 Authentication required' },
    { re: /must (?:issue a |use |be )?(?:starttls|authenticated|tls)|(?:starttls|tls|encryption|secure connection) (?:is )?(?:required|needed|mandatory)|requires? (?:a )?(?:secure|encrypted|tls)|insecure/i, example: '530 5.7.0 Must issue a STARTTLS command first' },
    { re: /certificate/i, example: '454 4.7.5 TLS handshake failed: certificate verify failed' },
    { re: /\bvirus\b|malware|infected|trojan/i, example: '554 5.7.0 Virus found in message' },
    { re: /security polic(?:y|ies)|security (?:issue|risk|threat)/i, example: '552 5.7.0 This message was blocked because its content presents a potential security issue.' },
  ],
};
