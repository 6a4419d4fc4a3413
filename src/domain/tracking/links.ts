import { createSecretKey, type KeyObject } from 'node:crypto';
import type { Config } from '../../config.js';
import { deriveKey } from '../../mail/keyring.js';
import { signClickToken, signOpenToken, signUnsubscribeToken } from './tokens.js';

/**
 * The URLs a message carries back to us. Links and the pixel use the customer's white-label
 * host (`http://track.<domain>`, http only: no certificate can exist for it) once its CNAME
 * is verified, else our base URL. The RFC 8058 one-click URL in List-Unsubscribe always uses
 * the base URL, which is https in production, as the RFC requires.
 */
export class TrackingLinks {
  /**
   * The key imported once: a message signs four or more tokens with it, and on Node 24 an HMAC
   * keyed with a Buffer costs ~10 µs more than with a KeyObject (docs/decisions/0054-build-step-copies-and-node24-hmac-keys.md).
   */
  private readonly signingKey: KeyObject;
  /**
   * The last message's unsubscribe token: a message's footer link and its List-Unsubscribe
   * one-click URL carry the same token, signed once.
   */
  private lastUnsubscribe = { messageId: '', token: '' };

  constructor(private readonly config: Pick<Config, 'secret' | 'baseUrl'>) {
    this.signingKey = createSecretKey(deriveKey(config.secret, 'tracking'));
  }

  /** The key the links are signed with, for the routes that verify them. */
  get tokenKey(): KeyObject {
    return this.signingKey;
  }

  base(trackingHost: string | null): string {
    return trackingHost ? `http://${trackingHost}` : this.config.baseUrl;
  }

  click(messageId: string, url: string, trackingHost: string | null): string {
    return `${this.base(trackingHost)}/t/c/${signClickToken(this.signingKey, messageId, url)}`;
  }

  open(messageId: string, trackingHost: string | null): string {
    return `${this.base(trackingHost)}/t/o/${signOpenToken(this.signingKey, messageId)}`;
  }

  unsubscribe(messageId: string, trackingHost: string | null): string {
    return `${this.base(trackingHost)}/u/${this.unsubscribeToken(messageId)}`;
  }

  oneClick(messageId: string): string {
    return `${this.config.baseUrl}/u/${this.unsubscribeToken(messageId)}`;
  }

  private unsubscribeToken(messageId: string): string {
    if (this.lastUnsubscribe.messageId !== messageId) this.lastUnsubscribe = { messageId, token: signUnsubscribeToken(this.signingKey, messageId) };
    return this.lastUnsubscribe.token;
  }
}
