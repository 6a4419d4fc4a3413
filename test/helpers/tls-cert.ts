import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificate {
  certPath: string;
  keyPath: string;
  /** PEM of the certificate, to trust it as its own CA in clients. */
  cert: string;
}

/**
 * A self-signed certificate for 127.0.0.1 and localhost, made with the openssl command line
 * (node:crypto makes keys but not X.509 certificates). Valid for a day; clients trust it by
 * passing `cert` as their CA, so TLS is verified for real, host name included.
 */
export function makeTestCertificate(): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'postline-cert-'));
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
    '-keyout', keyPath, '-out', certPath,
  ], { stdio: 'pipe' });
  return { certPath, keyPath, cert: readFileSync(certPath, 'utf8') };
}
