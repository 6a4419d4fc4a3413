import type { Options } from '@node-rs/argon2';
import { invalid } from '../../errors.js';

/**
 * Password hashing with argon2id at OWASP's recommended cost (19 MiB, 2 passes, 1 lane),
 * stored as a PHC string so the parameters travel with the hash and can be raised later.
 * The native module is loaded at the first sign-in or password change, not at every start
 * of the API process (docs/decisions/0049-start-up-cpu.md).
 */
async function argon2() {
  const { Algorithm, hash, verify } = await import('@node-rs/argon2');
  const options: Options = { algorithm: Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 };
  return { hash, verify, options };
}

export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 256;

export function checkPassword(password: string, field = 'password'): void {
  const length = [...password].length;
  if (length < PASSWORD_MIN) throw invalid(field, `must be at least ${PASSWORD_MIN} characters`);
  if (length > PASSWORD_MAX) throw invalid(field, `must be at most ${PASSWORD_MAX} characters`);
}

export async function hashPassword(password: string): Promise<string> {
  const { hash, options } = await argon2();
  return hash(password, options);
}

// Verified against this when the address is unknown, so an unknown address costs the same time as a wrong password.
let decoy: Promise<string> | undefined;

export async function verifyPassword(stored: string | null, password: string): Promise<boolean> {
  const { hash, verify, options } = await argon2();
  if (stored === null) {
    decoy ??= hash('decoy password, never matches', options);
    await verify(await decoy, password);
    return false;
  }
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}
