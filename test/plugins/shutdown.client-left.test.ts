/**
 * Shutdown with a request whose client has gone. Fastify's close ends once every connection is
 * closed, and such a request has none left while its handler still works: the pools used to be
 * ended under it ("Cannot use a pool after calling end on the pool", an unhandled error in the
 * log, the login half done). `app.close()` now waits for running handlers (src/plugins/in-flight.ts).
 */
import http from 'node:http';
import { availableParallelism } from 'node:os';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { hashPassword, passwordHashing, setPasswordHashConcurrency } from '../../src/lib/passwords.js';
import { createTestEnv } from '../helpers/context.js';
import { authProject, PASSWORD, uniqueEmail } from '../modules/auth/helpers.js';

afterEach(() => setPasswordHashConcurrency(availableParallelism()));

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(check()).toBe(true);
}

it('a login whose client left finishes before app.close() resolves; the pools then close without an error', async () => {
  const env = await createTestEnv({ RATE_LIMIT_SCALE: '100' });
  const p = await authProject(env);
  const email = uniqueEmail();
  const signup = await env.app.inject({ method: 'POST', url: '/api/userAuth/signup', headers: p.pk, payload: { email, password: PASSWORD } });
  expect(signup.statusCode).toBe(201);
  const db = new pg.Client({ connectionString: env.databaseUrl });
  await db.connect();
  const sessions = async () =>
    Number((await db.query('SELECT count(*) FROM app_user_sessions s JOIN app_users u ON u.id = s.user_id WHERE u.email = $1', [email])).rows[0].count);
  expect(await sessions()).toBe(1); // sign-up's own

  await env.app.listen({ port: 0, host: '127.0.0.1' });
  // Hashes ahead of it: the login's verify waits its turn long after its client has gone. Eight
  // (≈ 0.25 s of hashing) so a slow machine still queues the verify behind some of them.
  setPasswordHashConcurrency(1);
  let aheadDone = 0;
  const ahead = Array.from({ length: 8 }, (_, i) => hashPassword(`ahead ${i}`).finally(() => aheadDone++));
  const req = http.request({
    port: (env.app.server.address() as AddressInfo).port,
    host: '127.0.0.1',
    method: 'POST',
    path: '/api/userAuth/login',
    headers: { ...p.pk, 'content-type': 'application/json' },
  });
  req.on('error', () => {});
  req.end(JSON.stringify({ email, password: PASSWORD }));
  // The login's verify is queued: one more hash in the limiter than `ahead` has left.
  await until(() => {
    const { running, waiting } = passwordHashing();
    return running + waiting === ahead.length - aheadDone + 1;
  });
  req.destroy();

  await env.app.close();
  expect(await sessions()).toBe(2); // the login was finished, not cut off
  await Promise.all(ahead);
  await env.close();
  await db.end();
  const log = env.logs.join('');
  expect(log).not.toContain('Cannot use a pool after calling end');
  expect(log).not.toContain('unhandled error');
});
