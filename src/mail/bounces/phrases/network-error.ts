import type { PhraseFamily } from './phrase.js';

/** No connection, timeouts, temporary DNS failures: recipient side (their network), soft. */
export const networkError: PhraseFamily = {
  reason: 'network_error',
  phrases: [
    { re: /connection (?:refused|timed out|reset|closed|lost|dropped)|lost connection|(?:timed|time) ?out/i, example: '421 4.4.2 Connection timed out' },
    { re: /no route to host|network (?:is )?unreachable|host (?:is )?(?:unreachable|not reachable|down)/i, example: 'connect to mx.example.org[192.0.2.10]:25: No route to host' },
    { re: /(?:could not|couldn't|unable to|cannot|can't|failed to|wasn't able to) (?:connect|establish)/i, example: "Sorry, I wasn't able to establish an SMTP connection. (#4.4.1)" },
    { re: /name (?:server|service) (?:error|failure|timeout)|dns (?:error|failure|timeout|temporary|lookup)|temporary (?:dns|lookup)|host not found, try again/i, example: 'Name service error for name=example.org type=MX: Host not found, try again' },
    { re: /no answer from|remote (?:server|host) (?:did not|does not|didn't) respond|tls (?:negotiation|handshake) fail/i, example: 'The remote server did not respond to the connection attempt' },
  ],
};
