/**
 * Sender domains: adding one (DKIM keys generated, private keys encrypted at rest), the DNS
 * records to publish, verification through the configured resolver, the white-label tracking
 * CNAME, and what the sending pipeline asks of a domain.
 *
 * Verification is one-way. A domain becomes `verified` the first time its RSA DKIM record
 * matches and stays verified for sending when a later check fails (a DNS host's bad minute
 * must not start rejecting mail); the later check still updates every record's status, so
 * the API and dashboard show the problem. The tracking CNAME is different: it follows DNS both
 * ways, because a dead `track.` host would break every link in new mail.
 */
import type { Config } from '../../config.js';
import type { Queryable } from '../../db/pool.js';
import {
  deleteDomain, insertDomain, markDomainVerified, selectDomain, selectDomainById, selectDomainPage,
  selectDomainsOfAccount, selectSigningKeys, selectVerifiedDomainByName, updateDomainCheck, updateTrackingCheck,
  type DomainRow, type StoredRecordCheck,
} from '../../db/queries/domains.js';
import { AppError, notFound } from '../../errors.js';
import { newId } from '../../ids.js';
import { dkimTxtRecord, generateDkimKeyPair, type DkimAlgorithm } from '../../mail/dkim.js';
import { decryptSecret, encryptSecret } from '../../mail/keyring.js';
import { bounceDomainFor, domainOfAddress, newSelectors, normalizeDomainName, trackingHostFor } from './name.js';
import {
  checkRecord, checkRecords, expectedRecords, trackingStatusOf,
  type DnsTargets, type DomainDns, type ExpectedRecord, type RecordCheck, type RecordPurpose, type RecordStatus,
} from './records.js';

export { bounceDomainFor, normalizeDomainName, trackingHostFor } from './name.js';
export type { DnsTargets, DomainDns, RecordPurpose, RecordStatus } from './records.js';

export interface DomainRecord extends ExpectedRecord {
  status: RecordStatus;
  checkedAt: string | null;
  /** Why a check did not pass (or what DMARC record was found); null when nothing to say. */
  detail: string | null;
}

export interface Domain {
  id: string;
  name: string;
  status: 'pending' | 'verified';
  records: DomainRecord[];
  tracking: { host: string; target: string; status: 'pending' | 'verified' | 'failed'; checkedAt: string | null };
  createdAt: string;
  verifiedAt: string | null;
  checkedAt: string | null;
}

/** What POST /emails needs to know about the From domain. */
export interface SendingDomain {
  id: string;
  accountId: string;
  name: string;
  /** Domain of the VERP return path (MAIL FROM). */
  bounceDomain: string;
  /** `track.<domain>` when its CNAME is confirmed, else null (use the default tracking host). */
  trackingHost: string | null;
}

export interface SigningKeys {
  domain: string;
  keys: { algorithm: DkimAlgorithm; selector: string; privateKeyPem: string }[];
  trackingHost: string | null;
}

/** Where our side lives, read from the configuration. */
export function dnsTargetsOf(config: Pick<Config, 'baseUrl' | 'trackingHost'> & Partial<Pick<Config, 'deliveryPolicy'>>): DnsTargets {
  const sourceAddresses = config.deliveryPolicy?.identity.sources.map((s) => s.address) ?? [];
  return { returnPathHost: new URL(config.baseUrl).hostname, trackingHost: config.trackingHost, ...(sourceAddresses.length ? { sourceAddresses } : {}) };
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toDomain(row: DomainRow, targets: DnsTargets): Domain {
  const records = expectedRecords(row, targets).map((r): DomainRecord => {
    const last = row.record_status[r.purpose];
    return { ...r, status: (last?.status as RecordStatus | undefined) ?? 'pending', checkedAt: last?.checkedAt ?? null, detail: last?.detail ?? null };
  });
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    records,
    tracking: { host: trackingHostFor(row.name), target: targets.trackingHost, status: row.tracking_status, checkedAt: iso(row.tracking_checked_at) },
    createdAt: row.created_at.toISOString(),
    verifiedAt: iso(row.verified_at),
    checkedAt: iso(row.checked_at),
  };
}

/**
 * Adds a domain to an account: validates the name, generates an RSA-2048 and an Ed25519 key
 * (in parallel; RSA generation takes tens of milliseconds), stores the private keys encrypted
 * under the root secret. A name the account already has → `conflict`.
 */
export async function createDomain(
  db: Queryable,
  input: { accountId: string; name: string; now: Date },
  settings: { secret: string; targets: DnsTargets },
): Promise<Domain> {
  const name = normalizeDomainName(input.name);
  const [rsa, ed] = await Promise.all([generateDkimKeyPair('rsa'), generateDkimKeyPair('ed25519')]);
  const selectors = newSelectors();
  const row = await insertDomain(db, {
    id: newId('dom'),
    accountId: input.accountId,
    name,
    rsaSelector: selectors.rsa,
    rsaPrivateKey: encryptSecret(rsa.privateKeyPem, settings.secret),
    rsaPublicTxt: dkimTxtRecord('rsa', rsa.publicKeyPem),
    edSelector: selectors.ed,
    edPrivateKey: encryptSecret(ed.privateKeyPem, settings.secret),
    edPublicTxt: dkimTxtRecord('ed25519', ed.publicKeyPem),
    now: input.now,
  });
  if (!row) throw new AppError('conflict', `This account already has the domain ${name}`, { errors: [{ field: 'name', message: 'is already added to this account' }] });
  return toDomain(row, settings.targets);
}

async function requireDomain(db: Queryable, accountId: string, id: string): Promise<DomainRow> {
  const row = await selectDomain(db, accountId, id);
  if (!row) throw notFound(`domain ${id}`);
  return row;
}

export async function getDomain(db: Queryable, accountId: string, id: string, targets: DnsTargets): Promise<Domain> {
  return toDomain(await requireDomain(db, accountId, id), targets);
}

/** One page in id order; returns up to `limit + 1` domains so the caller can tell whether more follow. */
export async function listDomainPage(
  db: Queryable,
  accountId: string,
  page: { limit: number; order: 'asc' | 'desc'; afterId: string | null },
  targets: DnsTargets,
): Promise<Domain[]> {
  return (await selectDomainPage(db, accountId, page)).map((r) => toDomain(r, targets));
}

export async function domainsOfAccount(db: Queryable, accountId: string, targets: DnsTargets): Promise<Domain[]> {
  return (await selectDomainsOfAccount(db, accountId)).map((r) => toDomain(r, targets));
}

export async function removeDomain(db: Queryable, accountId: string, id: string): Promise<void> {
  if (!(await deleteDomain(db, accountId, id))) throw notFound(`domain ${id}`);
}

/** The account a domain belongs to, for operator tools that start from a bare domain id. */
export async function accountOfDomain(db: Queryable, id: string): Promise<string> {
  const row = await selectDomainById(db, id);
  if (!row) throw notFound(`domain ${id}`);
  return row.account_id;
}

const stored = (check: RecordCheck, now: Date): StoredRecordCheck => ({ status: check.status, checkedAt: now.toISOString(), detail: check.detail });

export interface CheckContext {
  dns: DomainDns;
  targets: DnsTargets;
  now: Date;
}

/** Looks every record up and records the result; verifies the domain when its RSA DKIM key matches. */
export async function verifyDomain(db: Queryable, accountId: string, id: string, ctx: CheckContext): Promise<Domain> {
  const row = await requireDomain(db, accountId, id);
  const checks = await checkRecords(ctx.dns, expectedRecords(row, ctx.targets), ctx.targets);
  const recordStatus = Object.fromEntries(
    (Object.entries(checks) as [RecordPurpose, RecordCheck][]).map(([purpose, check]) => [purpose, stored(check, ctx.now)]),
  );
  const updated = await updateDomainCheck(db, accountId, id, {
    recordStatus,
    dkimVerified: checks.dkim.status === 'verified',
    trackingStatus: trackingStatusOf(checks.tracking),
    now: ctx.now,
  });
  if (!updated) throw notFound(`domain ${id}`); // deleted while we were looking
  return toDomain(updated, ctx.targets);
}

/** The white-label check alone: `track.<domain>` CNAME → the tracking host. */
export async function verifyTrackingDomain(db: Queryable, accountId: string, id: string, ctx: CheckContext): Promise<Domain> {
  const row = await requireDomain(db, accountId, id);
  const record = expectedRecords(row, ctx.targets).find((r) => r.purpose === 'tracking')!;
  const check = await checkRecord(ctx.dns, record, ctx.targets);
  const updated = await updateTrackingCheck(db, accountId, id, { check: stored(check, ctx.now), trackingStatus: trackingStatusOf(check), now: ctx.now });
  if (!updated) throw notFound(`domain ${id}`);
  return toDomain(updated, ctx.targets);
}

/**
 * Marks a domain verified without looking at DNS: `postline domains verify --force` for
 * evaluation without DNS control, and tests of features that need a verified domain. Mail
 * from such a domain is signed with keys no receiver can find, so it fails DKIM until the
 * records are published.
 */
export async function forceVerifyDomain(db: Queryable, domainId: string, now: Date): Promise<void> {
  if (!(await markDomainVerified(db, domainId, now))) throw notFound(`domain ${domainId}`);
}

/**
 * The dashboard's "Mark verified" for development: only when the server captures mail instead of
 * delivering it (POSTLINE_DELIVERY=capture), where no receiver ever checks DKIM. Elsewhere the
 * DNS check is the only way (or the CLI's explicit --force).
 */
export async function markVerifiedForDevelopment(db: Queryable, accountId: string, id: string, delivery: string, now: Date): Promise<void> {
  if (delivery !== 'capture') {
    throw new AppError('forbidden', 'Marking a domain verified without DNS is for development servers (POSTLINE_DELIVERY=capture); publish the records and press Verify');
  }
  const row = await selectDomain(db, accountId, id);
  if (!row) throw notFound(`domain ${id}`);
  await forceVerifyDomain(db, id, now);
}

/**
 * The account's verified domain that is exactly the From address's domain (case-insensitive,
 * IDN in punycode form), or null. A subdomain of a verified domain is not covered: DKIM `d=`
 * and the return path are per domain, and each name needs its own records.
 */
export async function findSendingDomain(db: Queryable, accountId: string, fromEmail: string): Promise<SendingDomain | null> {
  const name = domainOfAddress(fromEmail);
  if (!name) return null;
  const row = await selectVerifiedDomainByName(db, accountId, name);
  if (!row) return null;
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    bounceDomain: bounceDomainFor(row.name),
    trackingHost: row.tracking_status === 'verified' ? trackingHostFor(row.name) : null,
  };
}

/**
 * Decrypted DKIM keys for the signer, RSA first. Both keys are always returned: mail is
 * dual-signed, and receivers that find no Ed25519 key still pass the RSA signature. A domain's
 * keys never change, so a worker may cache the result; only `trackingHost` can change (when
 * the CNAME check flips), so keep such a cache short (a minute). Throws `not_found` for a
 * deleted domain, SecretDecryptError when POSTLINE_SECRET changed since the key was stored.
 */
export async function loadSigningKeys(db: Queryable, domainId: string, secret: string): Promise<SigningKeys> {
  const row = await selectSigningKeys(db, domainId);
  if (!row) throw notFound(`domain ${domainId}`);
  return {
    domain: row.name,
    keys: [
      { algorithm: 'rsa', selector: row.rsa_selector, privateKeyPem: decryptSecret(row.rsa_private_key, secret) },
      { algorithm: 'ed25519', selector: row.ed_selector, privateKeyPem: decryptSecret(row.ed_private_key, secret) },
    ],
    trackingHost: row.tracking_status === 'verified' ? trackingHostFor(row.name) : null,
  };
}
