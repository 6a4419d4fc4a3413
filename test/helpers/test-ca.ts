/**
 * A certificate authority made for one test file with the openssl command line: a CA
 * certificate the code under test is told to trust (`extraCa`, or NODE_EXTRA_CA_CERTS for a
 * child process), and server certificates it issues for given names and validity windows.
 * Nothing is shared between test files; the files live in a temporary directory.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface IssuedCertificate {
  key: string;
  cert: string;
}

export interface TestCa {
  /** The CA certificate (PEM). */
  cert: string;
  /** Its path, for NODE_EXTRA_CA_CERTS. */
  certPath: string;
  /** A server certificate for `names` (SANs), valid from `notBefore` to `notAfter` (default: yesterday to a week ahead). */
  issue(names: string[], validity?: { notBefore?: Date; notAfter?: Date }): IssuedCertificate;
  close(): void;
}

const DAY_MS = 86_400_000;

/** openssl's ASN.1 time: YYYYMMDDHHMMSSZ. */
const asn1Time = (d: Date) => d.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z';

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

export function createTestCa(name = 'Postline Test CA'): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'postline-ca-'));
  mkdirSync(join(dir, 'issued'));
  writeFileSync(join(dir, 'index.txt'), '');
  writeFileSync(join(dir, 'serial'), '1000\n');
  openssl([
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '30',
    '-subj', `/CN=${name}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
  ], dir);
  const certPath = join(dir, 'ca.crt');
  let n = 0;

  return {
    cert: readFileSync(certPath, 'utf8'),
    certPath,
    issue(names, validity = {}) {
      const id = `s${++n}`;
      const notBefore = validity.notBefore ?? new Date(Date.now() - DAY_MS);
      const notAfter = validity.notAfter ?? new Date(Date.now() + 7 * DAY_MS);
      writeFileSync(join(dir, `${id}.cnf`), [
        '[ca]', 'default_ca = test',
        '[test]', 'database = index.txt', 'new_certs_dir = issued', 'serial = serial', 'default_md = sha256', 'policy = any', 'unique_subject = no',
        '[any]', 'commonName = supplied',
        '[ext]', `subjectAltName = ${names.map((x) => `DNS:${x}`).join(',')}`, 'basicConstraints = CA:FALSE', 'extendedKeyUsage = serverAuth',
      ].join('\n'));
      openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${id}.key`, '-out', `${id}.csr`, '-subj', `/CN=${names[0]}`], dir);
      openssl([
        'ca', '-batch', '-config', `${id}.cnf`, '-cert', 'ca.crt', '-keyfile', 'ca.key', '-in', `${id}.csr`, '-out', `${id}.crt`,
        '-startdate', asn1Time(notBefore), '-enddate', asn1Time(notAfter), '-extensions', 'ext', '-notext',
      ], dir);
      return { key: readFileSync(join(dir, `${id}.key`), 'utf8'), cert: readFileSync(join(dir, `${id}.crt`), 'utf8') };
    },
    close() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
