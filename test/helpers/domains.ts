import type { Pool } from '../../src/db/pool.js';
import { selectDomainById } from '../../src/db/queries/domains.js';
import { createDomain, forceVerifyDomain } from '../../src/domain/domains/domains.js';
import { dkimRecordName } from '../../src/mail/dkim.js';

export interface VerifiedTestDomain {
  id: string;
  name: string;
  rsaSelector: string;
  edSelector: string;
  /** TXT values to publish at `<selector>._domainkey.<name>` (see rsaRecordName / edRecordName). */
  rsaTxt: string;
  edTxt: string;
  rsaRecordName: string;
  edRecordName: string;
}

/**
 * A verified sender domain without DNS, for tests of features that send mail. Publish the
 * DKIM records in a test DNS server to verify signatures on received mail:
 *   dns.setRecords(d.rsaRecordName, 'TXT', [d.rsaTxt]); dns.setRecords(d.edRecordName, 'TXT', [d.edTxt]);
 */
export async function createVerifiedDomain(pool: Pool, accountId: string, name: string, secret: string): Promise<VerifiedTestDomain> {
  const targets = { returnPathHost: 'localhost', trackingHost: 'localhost' };
  const created = await createDomain(pool, { accountId, name, now: new Date() }, { secret, targets });
  await forceVerifyDomain(pool, created.id, new Date());
  const row = (await selectDomainById(pool, created.id))!;
  return {
    id: row.id,
    name: row.name,
    rsaSelector: row.rsa_selector,
    edSelector: row.ed_selector,
    rsaTxt: row.rsa_public_txt,
    edTxt: row.ed_public_txt,
    rsaRecordName: dkimRecordName(row.rsa_selector, row.name),
    edRecordName: dkimRecordName(row.ed_selector, row.name),
  };
}
