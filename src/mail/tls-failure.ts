/**
 * What a failed TLS certificate check means, in the result types of TLS reporting
 * (RFC 8460 §4.3): the words MTA-STS deferrals, the policy fetch and the daily report share.
 * Node reports certificate problems as OpenSSL codes on the error (`err.code`), and a
 * name mismatch as ERR_TLS_CERT_ALTNAME_INVALID.
 */
export type CertificateFailure = 'certificate-expired' | 'certificate-host-mismatch' | 'certificate-not-trusted' | 'validation-failure';

const NOT_TRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
]);
const EXPIRED = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID']);
const OTHER_CERT = new Set([
  'CERT_SIGNATURE_FAILURE',
  'CERT_REVOKED',
  'INVALID_CA',
  'PATH_LENGTH_EXCEEDED',
  'INVALID_PURPOSE',
  'CERT_CHAIN_TOO_LONG',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'ERROR_IN_CERT_NOT_BEFORE_FIELD',
  'ERROR_IN_CERT_NOT_AFTER_FIELD',
]);

/**
 * OpenSSL's texts for the same failures. nodemailer wraps a failed STARTTLS upgrade in its own
 * error (`ETLS`, "Error initiating TLS - <node's message>"), so for SMTP the text is all that is left.
 */
const BY_TEXT: [RegExp, CertificateFailure][] = [
  [/does not match certificate's altnames|ERR_TLS_CERT_ALTNAME_INVALID/i, 'certificate-host-mismatch'],
  [/certificate has expired|certificate is not yet valid/i, 'certificate-expired'],
  [/self[- ]signed certificate|unable to verify the first certificate|unable to get (local )?issuer certificate|certificate not trusted/i, 'certificate-not-trusted'],
  [/certificate signature failure|certificate revoked|invalid CA certificate/i, 'validation-failure'],
];

/** The certificate failure an error stands for, or null when it is not a certificate failure. */
export function certificateFailureOf(err: unknown): CertificateFailure | null {
  const code = (err as { code?: unknown })?.code;
  if (typeof code === 'string') {
    if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return 'certificate-host-mismatch';
    if (EXPIRED.has(code)) return 'certificate-expired';
    if (NOT_TRUSTED.has(code)) return 'certificate-not-trusted';
    if (OTHER_CERT.has(code)) return 'validation-failure';
  }
  const message = (err as { message?: unknown })?.message;
  if (typeof message !== 'string') return null;
  return BY_TEXT.find(([re]) => re.test(message))?.[1] ?? null;
}
