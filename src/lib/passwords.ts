/**
 * Password hashing for operators and end users: argon2id, m = 19 MiB, t = 2, p = 1 (OWASP's first recommended
 * argon2id setting). On the 2-core reference server one hash costs ≈ 25–30 ms of one core, so
 * both cores give roughly 60–70 hashes/s (measured by bench/auth.ts, see docs/auth.md): slow
 * enough that a stolen hash costs an attacker real memory-hard work, fast enough that login
 * stays far below interactive latency. `argon2` runs on the libuv threadpool, so hashing never
 * blocks the event loop.
 *
 * At most one hash per CPU this process may use runs at once (`PASSWORD_HASH_CONCURRENCY`,
 * default `os.availableParallelism()`, which honours CPU affinity); the rest wait their turn in
 * order. The libuv pool has 4 threads: on a one-core container four concurrent hashes left the
 * event loop a fifth of the core, so the database calls of other requests waited past the
 * project's queue limit and answered 429 (docs/auth.md "Password hashing under load"). More
 * hashes than cores never hash faster; they only starve the rest of the process and keep the
 * pool's threads from file and DNS work.
 */
import { availableParallelism } from 'node:os';
import argon2 from 'argon2';
import pLimit from 'p-limit';
import { randomToken } from './crypto.js';

export const ARGON2_OPTIONS = {
  type: argon2.argon2id,
  memoryCost: 19 * 1024,
  timeCost: 2,
  parallelism: 1,
} as const;

const hashing = pLimit(availableParallelism());

/** Sets how many hashes or verifies run at once (boot, from PASSWORD_HASH_CONCURRENCY). */
export function setPasswordHashConcurrency(n: number): void {
  hashing.concurrency = n;
}

/** Hashes and verifies running now and waiting for a turn (the `plinth_password_hashes` gauge). */
export function passwordHashing(): { running: number; waiting: number } {
  return { running: hashing.activeCount, waiting: hashing.pendingCount };
}

export function hashPassword(password: string): Promise<string> {
  return hashing(() => argon2.hash(password, ARGON2_OPTIONS));
}

let dummy: Promise<string> | undefined;

/** A hash of a random password with the same parameters: verified when the email is unknown. */
function dummyHash(): Promise<string> {
  dummy ??= hashPassword(randomToken(24));
  return dummy;
}

/** Constant-work check: an unknown account (no hash) costs the same argon2 verify and fails. */
export async function verifyPassword(hash: string | null | undefined, password: string): Promise<boolean> {
  const target = hash ?? (await dummyHash());
  try {
    const ok = await hashing(() => argon2.verify(target, password));
    return ok && hash != null;
  } catch {
    return false;
  }
}

/** Social sign-in users get an unguessable internal password (docs/auth.md). */
export function randomPasswordHash(): Promise<string> {
  return hashPassword(randomToken(24));
}

/** Warms the dummy hash at start so the first unknown-email login is not faster or slower. */
export function warmPasswords(): void {
  void dummyHash();
}
