import { Algorithm, hash, verify } from '@node-rs/argon2';
import { invalid } from '../../errors.js';

/**
 * Password hashing with argon2id at OWASP's recommended cost (19 MiB, 2 passes, 1 lane),
 * stored as a PHC string so the parameters travel with the hash and can be raised later.
 */
const OPTIONS = { algorithm: Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 256;

export function checkPassword(password: string, field = 'password'): void {
  const length = [...password].length;
  if (length < PASSWORD_MIN) throw invalid(field, `must be at least ${PASSWORD_MIN} characters`);
  if (length > PASSWORD_MAX) throw invalid(field, `must be at most ${PASSWORD_MAX} characters`);
}

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

// Verified against this when the address is unknown, so an unknown address costs the same time as a wrong password.
let decoy: Promise<string> | undefined;

export async function verifyPassword(stored: string | null, password: string): Promise<boolean> {
  if (stored === null) {
    decoy ??= hash('decoy password, never matches', OPTIONS);
    await verify(await decoy, password);
    return false;
  }
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}
