/**
 * Operator passwords: argon2id (OWASP parameters), hashed off the event loop by the argon2
 * package. `verifyPassword` always does one full verification, against a dummy hash when the
 * account does not exist, so response time does not reveal which emails are registered.
 */
import argon2 from 'argon2';

const OPTIONS = { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

let dummy: Promise<string> | undefined;

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, OPTIONS);
}

export async function verifyPassword(hash: string | undefined, password: string): Promise<boolean> {
  const target = hash ?? (await (dummy ??= hashPassword('plinth-dummy-password-for-timing')));
  try {
    const ok = await argon2.verify(target, password);
    return ok && hash !== undefined;
  } catch {
    return false;
  }
}
