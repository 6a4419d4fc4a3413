import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dataDirOf } from './data-dir.js';
import { loadPolicy, PolicyError, type DeliveryPolicy } from './delivery-policy.js';
import { DEFAULT_WORKER_SEMI_SPACE_MB, WORKER_SEMI_SPACE_VARIABLE } from './worker-heap.js';

export type DeliveryMode = 'mx' | 'relay' | 'capture';
export type Role = 'all' | 'api' | 'worker';

/** The whole environment of docs/architecture.md#configuration, read once and validated. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  baseUrl: string;
  trackingHost: string;
  secret: string;
  fblSecret: string;
  delivery: DeliveryMode;
  smtpRelay: string | undefined;
  dnsServers: string[] | undefined;
  mxPort: number;
  /** Port of recipients' MTA-STS policy hosts: 443; tests serve policies on another port. */
  mtaStsPort: number;
  smtpPort: number;
  webhookAllowPrivate: boolean;
  bodyLimit: number;
  /** Messages one worker process has in flight at once, and SMTP connections per MX host. */
  deliveryConcurrency: number;
  mxConnectionsPerHost: number;
  /** Per-provider traffic shaping (POSTLINE_DELIVERY_POLICY, docs/delivery-policy.md). */
  deliveryPolicy: DeliveryPolicy;
  /** Requests per minute per account: live keys, and all test keys together. */
  rateLimits: { live: number; test: number };
  /** How long an in-flight Idempotency-Key claim holds without renewal (docs/decisions/0029-idempotency-lease.md). */
  idempotencyLeaseMs: number;
  /**
   * The reverse proxies whose X-Forwarded-For is believed (addresses or CIDRs); empty: the
   * client address is the TCP peer's, and X-Forwarded-For is ignored (docs/deploy.md).
   */
  trustProxy: string[];
  logLevel: string;
  /**
   * Each semi-space of a worker process's young generation, in MB (POSTLINE_WORKER_SEMI_SPACE_MB,
   * default 16); null leaves V8's own size (0). Applied at the worker's start (src/worker-heap.ts).
   */
  workerSemiSpaceMb: number | null;
  /** SMTP submission (docs/submission.md); each port off when unset. */
  submission: SubmissionConfig;
  /** TLS reports (RFC 8460) about recipient domains: who we say we are, and whether they are sent. */
  /** TLS reports (docs/sending-identity.md#tls-reports-rfc-8460): who we say we are, whether to send, and the From of mailto reports. */
  tlsReports: { organization: string; contact: string; send: boolean; from: string | null };
}

export interface SubmissionConfig {
  /** 587-style: plain connection, STARTTLS before AUTH. */
  port: number | undefined;
  /** 465-style: TLS from the first byte. */
  tlsPort: number | undefined;
  /** PEM paths of the listeners' certificate chain and key. */
  tlsCert: string | undefined;
  tlsKey: string | undefined;
  /** AUTH before STARTTLS; only honoured when HOST is a loopback address (development). */
  allowInsecureAuth: boolean;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
  }
}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(name, `must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return n;
}

function bool(env: Env, name: string): boolean {
  const raw = (env[name] ?? '').toLowerCase();
  if (raw === '' || raw === '0' || raw === 'false' || raw === 'no') return false;
  if (raw === '1' || raw === 'true' || raw === 'yes') return true;
  throw new ConfigError(name, `must be true or false, got "${env[name]}"`);
}

function url(env: Env, name: string, fallback: string, protocols: string[]): string {
  const raw = env[name] || fallback;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be a URL, got "${raw}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
  }
  return raw.replace(/\/+$/, '');
}

/** A secret from the environment, else generated once and kept in the data dir. */
function persistentSecret(env: Env, name: string, dataDir: string, file: string, prefix = ''): string {
  const raw = env[name];
  if (raw !== undefined && raw !== '') {
    if (raw.length < 16) throw new ConfigError(name, 'must be at least 16 characters');
    return raw;
  }
  const path = join(dataDir, file);
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const secret = prefix + randomBytes(32).toString('base64url');
  writeFileSync(path, secret + '\n', { mode: 0o600 });
  return secret;
}

const IP_OR_CIDR = /^([0-9]{1,3}(\.[0-9]{1,3}){3}|[0-9a-fA-F:]*:[0-9a-fA-F:.]*)(\/\d{1,3})?$/;

function trustProxy(env: Env): string[] {
  const raw = (env.POSTLINE_TRUST_PROXY ?? '').trim();
  if (raw === '') return [];
  const entries = raw.split(',').map((s) => s.trim()).filter(Boolean);
  for (const e of entries) {
    if (!IP_OR_CIDR.test(e)) throw new ConfigError('POSTLINE_TRUST_PROXY', `"${e}" is not an IP address or CIDR range (e.g. 127.0.0.1,10.0.0.0/8)`);
  }
  return entries;
}

function dnsServers(env: Env): string[] | undefined {
  const raw = env.POSTLINE_DNS_SERVERS;
  if (!raw) return undefined;
  const servers = raw.split(',').map((s) => s.trim()).filter(Boolean);
  for (const s of servers) {
    if (!/^(\[[0-9a-fA-F:.]+\]|[0-9.]+|[0-9a-fA-F:]+)(:\d{1,5})?$/.test(s)) {
      throw new ConfigError('POSTLINE_DNS_SERVERS', `"${s}" is not an IP address with an optional port`);
    }
  }
  return servers;
}

function deliveryPolicy(env: Env): DeliveryPolicy {
  try {
    return loadPolicy(env.POSTLINE_DELIVERY_POLICY || undefined);
  } catch (err) {
    if (err instanceof PolicyError) throw new ConfigError('POSTLINE_DELIVERY_POLICY', `${err.key}: ${err.message.split(': ').slice(2).join(': ')}`);
    throw err;
  }
}

/** The reporting organisation of TLS reports: the base URL's host unless named. */
function tlsReportSettings(env: Env, host: string): Config['tlsReports'] {
  const organization = (env.POSTLINE_TLSRPT_ORG || host).trim();
  const contact = (env.POSTLINE_TLSRPT_CONTACT || `postmaster@${host}`).trim();
  if (/[\r\n]/.test(organization) || organization.length > 200) throw new ConfigError('POSTLINE_TLSRPT_ORG', 'must be one line of at most 200 characters');
  if (!/^[^\s@]+@[^\s@]+$/.test(contact)) throw new ConfigError('POSTLINE_TLSRPT_CONTACT', `must be an email address, got "${contact}"`);
  // mailto reports leave from this address, DKIM-signed by its domain (docs/decisions/0036-tls-report-mail.md).
  const from = env.POSTLINE_TLSRPT_FROM?.trim() || null;
  if (from !== null && !/^[^\s@<>,;:"\\()[\]]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/.test(from)) {
    throw new ConfigError('POSTLINE_TLSRPT_FROM', `must be an email address at a domain name, got "${from}"`);
  }
  return { organization, contact, send: bool(env, 'POSTLINE_TLSRPT_SEND'), from };
}

export function loadConfig(env: Env = process.env): Config {
  const port = int(env, 'PORT', 3000, 0, 65535);
  const dataDir = dataDirOf(env);
  const baseUrl = url(env, 'POSTLINE_BASE_URL', `http://localhost:${port}`, ['http:', 'https:']);
  const delivery = (env.POSTLINE_DELIVERY || 'mx') as DeliveryMode;
  if (!['mx', 'relay', 'capture'].includes(delivery)) {
    throw new ConfigError('POSTLINE_DELIVERY', `must be mx, relay or capture, got "${delivery}"`);
  }
  const smtpRelay = env.POSTLINE_SMTP_RELAY ? url(env, 'POSTLINE_SMTP_RELAY', '', ['smtp:', 'smtps:']) : undefined;
  if (delivery === 'relay' && !smtpRelay) {
    throw new ConfigError('POSTLINE_SMTP_RELAY', 'is required when POSTLINE_DELIVERY=relay');
  }
  const databaseUrl = env.DATABASE_URL ? url(env, 'DATABASE_URL', '', ['postgres:', 'postgresql:']) : undefined;
  const trackingHost = env.POSTLINE_TRACKING_HOST || new URL(baseUrl).hostname;
  if (!/^[a-zA-Z0-9.-]+$/.test(trackingHost)) {
    throw new ConfigError('POSTLINE_TRACKING_HOST', `must be a host name, got "${trackingHost}"`);
  }
  return {
    port,
    host: env.HOST || '0.0.0.0',
    dataDir,
    databaseUrl,
    baseUrl,
    trackingHost: trackingHost.toLowerCase(),
    secret: persistentSecret(env, 'POSTLINE_SECRET', dataDir, 'secret'),
    fblSecret: persistentSecret(env, 'POSTLINE_FBL_SECRET', dataDir, 'fbl-secret', 'fbl_'),
    delivery,
    smtpRelay,
    dnsServers: dnsServers(env),
    mxPort: int(env, 'POSTLINE_MX_PORT', 25, 1, 65535),
    mtaStsPort: int(env, 'POSTLINE_MTA_STS_PORT', 443, 1, 65535),
    smtpPort: int(env, 'POSTLINE_SMTP_PORT', 2525, 0, 65535),
    webhookAllowPrivate: bool(env, 'POSTLINE_WEBHOOK_ALLOW_PRIVATE'),
    bodyLimit: int(env, 'POSTLINE_BODY_LIMIT', 10 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    deliveryConcurrency: int(env, 'POSTLINE_DELIVERY_CONCURRENCY', 200, 1, 10_000),
    mxConnectionsPerHost: int(env, 'POSTLINE_MX_CONNECTIONS_PER_HOST', 10, 1, 1000),
    deliveryPolicy: deliveryPolicy(env),
    rateLimits: {
      live: int(env, 'POSTLINE_RATE_LIMIT_LIVE', 600, 1, 100_000_000),
      test: int(env, 'POSTLINE_RATE_LIMIT_TEST', 120, 1, 100_000_000),
    },
    idempotencyLeaseMs: int(env, 'POSTLINE_IDEMPOTENCY_LEASE_SECONDS', 30, 1, 3600) * 1000,
    trustProxy: trustProxy(env),
    logLevel: env.LOG_LEVEL || 'info',
    workerSemiSpaceMb: int(env, WORKER_SEMI_SPACE_VARIABLE, DEFAULT_WORKER_SEMI_SPACE_MB, 0, 1024) || null,
    submission: submissionConfig(env),
    tlsReports: tlsReportSettings(env, new URL(baseUrl).hostname),
  };
}

function submissionConfig(env: Env): SubmissionConfig {
  const optionalPort = (name: string) => (env[name] ? int(env, name, 0, 0, 65535) : undefined);
  const port = optionalPort('POSTLINE_SUBMISSION_PORT');
  const tlsPort = optionalPort('POSTLINE_SUBMISSIONS_PORT');
  const tlsCert = env.POSTLINE_TLS_CERT || undefined;
  const tlsKey = env.POSTLINE_TLS_KEY || undefined;
  const allowInsecureAuth = bool(env, 'POSTLINE_SUBMISSION_ALLOW_INSECURE_AUTH');
  if ((port !== undefined || tlsPort !== undefined) && (!tlsCert || !tlsKey)) {
    // Without a certificate of its own, STARTTLS would offer a self-signed one nobody can verify.
    throw new ConfigError(tlsCert ? 'POSTLINE_TLS_KEY' : 'POSTLINE_TLS_CERT', 'is required when POSTLINE_SUBMISSION_PORT or POSTLINE_SUBMISSIONS_PORT is set');
  }
  for (const [name, path] of [['POSTLINE_TLS_CERT', tlsCert], ['POSTLINE_TLS_KEY', tlsKey]] as const) {
    if (path && !existsSync(path)) throw new ConfigError(name, `no file at ${path}`);
  }
  return { port, tlsPort, tlsCert, tlsKey, allowInsecureAuth };
}

/** Whether `host` only takes connections from this machine. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * Settings that work but will hurt in production, said once at start-up. The base URL is where
 * List-Unsubscribe and tracking links point, and RFC 8058 one-click unsubscribe requires https:
 * receivers (Gmail, Yahoo) ignore an http one-click URL.
 */
export function startupWarnings(config: Pick<Config, 'baseUrl' | 'host' | 'submission'>): string[] {
  const warnings: string[] = [];
  if (config.submission.allowInsecureAuth && !isLoopbackHost(config.host)) {
    warnings.push(`POSTLINE_SUBMISSION_ALLOW_INSECURE_AUTH is ignored: HOST is ${config.host}, not a loopback address; SMTP submission asks for TLS before AUTH.`);
  }
  if (new URL(config.baseUrl).protocol !== 'https:') {
    warnings.push(
      `POSTLINE_BASE_URL is ${config.baseUrl}, not https: List-Unsubscribe links in mail point there, and RFC 8058 one-click ` +
      'unsubscribe requires https (Gmail and Yahoo ignore it otherwise). Set POSTLINE_BASE_URL=https://… to the public address of this API.',
    );
  }
  return warnings;
}
