import crypto, { type KeyObject } from 'node:crypto';
import { BoundedMap } from '../lib/bounded-map.js';

/**
 * mailauth imports the PEM private key again for every signature (crypto.createPrivateKey in
 * its getPrivateKey) and takes no pre-parsed KeyObject. In bench/delivery that import was 15%
 * of a delivery worker's CPU. KeyObjects are immutable, so the one parsed from a given PEM is
 * reused: this wraps createPrivateKey for PEM input only, bounded, and passes everything else
 * through unchanged. Installed once, by dkim.ts.
 */
const MAX_KEYS = 1000;
let installed = false;

export function installKeyImportCache(): void {
  if (installed) return;
  installed = true;
  const original = crypto.createPrivateKey;
  const cache = new BoundedMap<string, KeyObject>(MAX_KEYS);
  const cached = (key: Parameters<typeof original>[0]): KeyObject => {
    const pem =
      typeof key === 'object' && key !== null && !Buffer.isBuffer(key) && 'format' in key && key.format === 'pem' && !('passphrase' in key && key.passphrase)
        ? (key as { key: unknown }).key
        : undefined;
    if (typeof pem !== 'string' && !Buffer.isBuffer(pem)) return original(key);
    const id = typeof pem === 'string' ? pem : pem.toString('latin1');
    let obj = cache.get(id);
    if (!obj) {
      obj = original(key);
      cache.set(id, obj);
    }
    return obj;
  };
  (crypto as { createPrivateKey: typeof original }).createPrivateKey = cached as typeof original;
}
