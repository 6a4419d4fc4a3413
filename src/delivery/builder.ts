import { createSecretKey, type KeyObject } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Pool } from '../db/pool.js';
import type { MessageRow } from '../db/queries/messages.js';
import { bounceDomainFor, loadSigningKeys } from '../domain/domains/domains.js';
import { buildMessage, type BuiltMessage, type SigningInfo } from '../domain/sending/message-build.js';
import { TrackingLinks } from '../domain/tracking/links.js';
import { deriveKey } from '../mail/keyring.js';

const SIGNING_CACHE_MS = 60_000;

/**
 * The one thing delivery asks of campaigns: a message row with its content filled in. Campaign
 * messages carry merge data, not content; other rows come back unchanged.
 */
export interface ContentSource {
  render(msg: MessageRow, domain: string, trackingHost: string | null): Promise<MessageRow>;
}

/**
 * The engine's build step: a claimed row rendered (campaign copies), composed and DKIM-signed,
 * with at most `buildsAtOnce` builds under way in this worker (DeliveryOptions.buildsAtOnce
 * says why) and each sending domain's keys read once a minute.
 */
export class MessageBuilder {
  private readonly links: TrackingLinks;
  /** Imported once: every message's return path is an HMAC with it (src/mail/verp.ts says why). */
  private readonly verpKey: KeyObject;
  private readonly content: ContentSource;
  /** Each sending domain's keys, read once a minute; the read itself is shared, so the builds that start together before it returns do not each read and decrypt them. */
  private readonly signing = new Map<string, { info: Promise<SigningInfo>; at: number }>();
  /** Builds under way, and the deliveries waiting for a turn. */
  private builds = 0;
  private readonly buildQueue: (() => void)[] = [];

  constructor(
    private readonly deps: { pool: Pool; config: Config; clock: Clock; content: (links: TrackingLinks) => ContentSource },
    private readonly buildsAtOnce: number,
  ) {
    this.links = new TrackingLinks(deps.config);
    this.content = deps.content(this.links);
    this.verpKey = createSecretKey(deriveKey(deps.config.secret, 'verp'));
  }

  /** Build and sign one message: the step campaigns and automations hook their rendering into. */
  async build(msg: MessageRow, now: Date): Promise<BuiltMessage> {
    const signing = await this.signingFor(msg);
    // Campaign messages carry merge data, not content: rendered here from the campaign's one copy.
    const content = await this.content.render(msg, signing.domain, signing.trackingHost);
    return buildMessage(content, signing, this.links, { bounceDomain: bounceDomainFor(signing.domain), verpKey: this.verpKey, now });
  }

  /** build() with at most buildsAtOnce under way; a finished build hands its turn on. */
  async buildInTurn(msg: MessageRow): Promise<{ built: BuiltMessage; now: Date }> {
    if (this.builds >= this.buildsAtOnce) await new Promise<void>((r) => this.buildQueue.push(r));
    else this.builds++;
    try {
      // Date header and DKIM t= say when the message was built, not when it was claimed.
      const now = this.deps.clock.now();
      return { built: await this.build(msg, now), now };
    } finally {
      const next = this.buildQueue.shift();
      if (next) next();
      else this.builds--;
    }
  }

  private async signingFor(msg: MessageRow): Promise<SigningInfo> {
    const domainId = msg.domain_id;
    if (!domainId) throw new Error('the sending domain was deleted');
    const cached = this.signing.get(domainId);
    if (cached && Date.now() - cached.at < SIGNING_CACHE_MS) return cached.info;
    const info = loadSigningKeys(this.deps.pool, domainId, this.deps.config.secret);
    const entry = { info, at: Date.now() };
    this.signing.set(domainId, entry);
    // A failed read is not kept: the next message reads again.
    info.catch(() => {
      if (this.signing.get(domainId) === entry) this.signing.delete(domainId);
    });
    return info;
  }
}
