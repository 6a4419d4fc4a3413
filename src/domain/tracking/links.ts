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
  private readonly key: Buffer;

  constructor(private readonly config: Pick<Config, 'secret' | 'baseUrl'>) {
    this.key = deriveKey(config.secret, 'tracking');
  }

  get tokenKey(): Buffer {
    return this.key;
  }

  base(trackingHost: string | null): string {
    return trackingHost ? `http://${trackingHost}` : this.config.baseUrl;
  }

  click(messageId: string, url: string, trackingHost: string | null): string {
    return `${this.base(trackingHost)}/t/c/${signClickToken(this.key, messageId, url)}`;
  }

  open(messageId: string, trackingHost: string | null): string {
    return `${this.base(trackingHost)}/t/o/${signOpenToken(this.key, messageId)}`;
  }

  unsubscribe(messageId: string, trackingHost: string | null): string {
    return `${this.base(trackingHost)}/u/${signUnsubscribeToken(this.key, messageId)}`;
  }

  oneClick(messageId: string): string {
    return `${this.config.baseUrl}/u/${signUnsubscribeToken(this.key, messageId)}`;
  }
}
