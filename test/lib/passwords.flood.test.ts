/**
 * Password hashing under a flood of sign-ups and logins. argon2id runs on libuv's four pool
 * threads; on a one-core container four hashes at once left the event loop a fifth of the core,
 * and the database calls of other requests waited past the project's queue limit (429). So at
 * most PASSWORD_HASH_CONCURRENCY hashes run at once; the rest wait in order and still answer right.
 */
import { availableParallelism } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { hashPassword, passwordHashing, setPasswordHashConcurrency, verifyPassword } from '../../src/lib/passwords.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('password hashing under a flood', () => {
  afterEach(() => setPasswordHashConcurrency(availableParallelism()));

  it('a flood of logins never runs more hashes at once than allowed; the rest wait their turn and still verify right', async () => {
    setPasswordHashConcurrency(1);
    const hash = await hashPassword('correct horse battery');
    let most = 0;
    const watch = setInterval(() => (most = Math.max(most, passwordHashing().running)), 1);
    const flood = [
      verifyPassword(hash, 'correct horse battery'),
      verifyPassword(hash, 'wrong horse battery'),
      verifyPassword(null, 'an unknown account'), // the dummy hash, then its verify: two turns
      hashPassword('a new account'),
    ];
    await tick();
    expect(passwordHashing()).toEqual({ running: 1, waiting: 3 });
    const [right, wrong, unknown, fresh] = await Promise.all(flood);
    clearInterval(watch);
    expect([right, wrong, unknown]).toEqual([true, false, false]);
    expect(await verifyPassword(fresh as string, 'a new account')).toBe(true);
    expect(most).toBe(1);
    expect(passwordHashing()).toEqual({ running: 0, waiting: 0 });
  });

  it('with a higher limit, that many run at once', async () => {
    setPasswordHashConcurrency(3);
    const flood = [1, 2, 3, 4].map((i) => hashPassword(`password ${i}`));
    await tick();
    expect(passwordHashing()).toEqual({ running: 3, waiting: 1 });
    await Promise.all(flood);
    expect(passwordHashing()).toEqual({ running: 0, waiting: 0 });
  });
});
