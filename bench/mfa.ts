/**
 * Second-factor sign-in benchmark (`npx tsx bench/mfa.ts`, or `npm run bench -- mfa`): complete
 * sign-ins per second, beside password sign-in, on the same app and database:
 *   - password: POST /login (one argon2 verify),
 *   - password + TOTP: POST /login (challenge) then POST /mfa/verify with the app's code,
 *   - passkey: POST /passkeys/signin/options then POST /passkeys/signin (discoverable, ES256,
 *     a software authenticator: test/helpers/webauthn.ts),
 *   - an operator's passkey at the console: POST /api/auth/passkeys/signin/options then
 *     /signin (the same ceremony with the operators' adapter; DASHBOARD_URL's relying party).
 * Each runs BENCH_SECONDS (6) with BENCH_CONCURRENCY (8) sign-ins in flight, in this process
 * (the client's JSON and the authenticator's signing count against the rates; the ratio to
 * password sign-in is what to read). A TOTP code is good once per user and 30 s step, so each
 * TOTP sign-in takes a user not yet used in the current step (BENCH_MFA_USERS, 400).
 */
import type { AddressInfo } from 'node:net';
import { totpCode } from '../src/lib/identity/totp.js';
import { makeCollection, makeOperator, makeProject, USERS_FIELDS } from '../test/helpers/fixtures.js';
import { SoftAuthenticator } from '../test/helpers/webauthn.js';
import { runBench } from './lib/bench-app.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const USERS = Number(process.env.BENCH_MFA_USERS ?? 400);
const PASSWORD = 'correct horse 1';

const CONSOLE = 'https://console.example.com';

runBench('mfa', { DASHBOARD_URL: CONSOLE }, async ({ app, ctx }) => {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const project = await makeProject(ctx);
  await makeCollection(ctx, project.id, 'users', USERS_FIELDS);
  const origin = 'https://app.example.com';
  await app.inject({ method: 'PATCH', url: `/api/projects/${project.id}`, headers: project.owner.auth, payload: { passkeys: { rpId: 'example.com', origins: [origin] } } });
  const pk = { 'x-api-key': project.publishableKey, 'content-type': 'application/json' };
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(base + path, { method: 'POST', headers: { ...pk, ...headers }, body: JSON.stringify(body) });
    const json = (await res.json()) as { data: Record<string, unknown> };
    if (res.status !== 200 && res.status !== 201) throw new Error(`${path} ${res.status} ${JSON.stringify(json)}`);
    return json.data;
  };

  // Users: USERS with an authenticator app, one without a second factor, one with a passkey.
  console.log(`setting up ${USERS} users with an authenticator app…`);
  const totpUsers: Array<{ email: string; secret: string; lastStep: number }> = [];
  for (let i = 0; i < USERS; i++) {
    const email = `mfa${i}@bench.example`;
    const s = await post('/api/userAuth/signup', { email, password: PASSWORD });
    const auth = { authorization: `Bearer ${s.accessToken as string}` };
    const { secret } = (await post('/api/userAuth/mfa/totp/enroll', {}, auth)) as { secret: string };
    await post('/api/userAuth/mfa/totp/confirm', { code: totpCode(secret, ctx.clock.now()) }, auth);
    totpUsers.push({ email, secret, lastStep: Math.floor(ctx.clock.now().getTime() / 30_000) });
  }
  const plainEmail = 'plain@bench.example';
  await post('/api/userAuth/signup', { email: plainEmail, password: PASSWORD });
  // One passkey per sign-in in flight: one authenticator's assertions must reach the server in
  // counter order (a counter that does not grow is refused), which concurrent requests do not.
  const authenticators: SoftAuthenticator[] = [];
  for (let i = 0; i < CONCURRENCY; i++) {
    const keyOwner = await post('/api/userAuth/signup', { email: `passkey${i}@bench.example`, password: PASSWORD });
    const authenticator = new SoftAuthenticator(origin);
    const keyAuth = { authorization: `Bearer ${keyOwner.accessToken as string}` };
    const regOptions = await post('/api/userAuth/passkeys/register/options', {}, keyAuth);
    await post('/api/userAuth/passkeys/register', { name: 'bench', response: authenticator.register(regOptions as never) }, keyAuth);
    authenticators.push(authenticator);
  }
  const operatorKeys: SoftAuthenticator[] = [];
  for (let i = 0; i < CONCURRENCY; i++) {
    const op = await makeOperator(ctx);
    const authenticator = new SoftAuthenticator(CONSOLE);
    const regOptions = await post('/api/auth/mfa/passkeys/register/options', {}, op.auth);
    await post('/api/auth/mfa/passkeys/register', { name: 'bench', response: authenticator.register(regOptions as never) }, op.auth);
    operatorKeys.push(authenticator);
  }

  async function measure(name: string, signIn: (worker: number) => Promise<void>) {
    let done = 0;
    const latencies: number[] = [];
    const end = Date.now() + SECONDS * 1000;
    await Promise.all(Array.from({ length: CONCURRENCY }, async (_, worker) => {
      while (Date.now() < end) {
        const t = performance.now();
        await signIn(worker);
        latencies.push(performance.now() - t);
        done++;
      }
    }));
    latencies.sort((a, b) => a - b);
    const rps = done / SECONDS;
    console.log(`| ${name} | ${rps.toFixed(1)} | ${latencies[Math.floor(latencies.length / 2)]!.toFixed(0)} | ${latencies[Math.floor(latencies.length * 0.99)]!.toFixed(0)} |`);
    return rps;
  }

  let next = 0;
  /** A user whose code of the current step is still unused. */
  function freshTotpUser() {
    const step = Math.floor(Date.now() / 30_000);
    for (let tries = 0; tries < totpUsers.length; tries++) {
      const u = totpUsers[next++ % totpUsers.length]!;
      if (u.lastStep < step) {
        u.lastStep = step;
        return u;
      }
    }
    throw new Error('every user signed in this step: raise BENCH_MFA_USERS');
  }

  console.log(`\n| sign-in (${CONCURRENCY} in flight, ${SECONDS} s) | per second | p50 ms | p99 ms |\n|---|---|---|---|`);
  const pwd = await measure('password', async () => {
    await post('/api/userAuth/login', { email: plainEmail, password: PASSWORD });
  });
  const totp = await measure('password + TOTP (two requests)', async () => {
    const u = freshTotpUser();
    const c = await post('/api/userAuth/login', { email: u.email, password: PASSWORD });
    await post('/api/userAuth/mfa/verify', { challengeId: c.challengeId, code: totpCode(u.secret, new Date()) });
  });
  const passkey = await measure('passkey, discoverable (two requests)', async (worker) => {
    const options = await post('/api/userAuth/passkeys/signin/options', {});
    await post('/api/userAuth/passkeys/signin', { response: authenticators[worker]!.assert(options as never) });
  });
  const operatorPasskey = await measure('operator passkey at the console (two requests)', async (worker) => {
    const options = await post('/api/auth/passkeys/signin/options', {});
    await post('/api/auth/passkeys/signin', { response: operatorKeys[worker]!.assert(options as never) });
  });
  console.log(`operator passkey sign-in ${(operatorPasskey / pwd).toFixed(1)}× end-user password sign-in.`);
  console.log(`\nTOTP sign-in ${(100 * totp / pwd).toFixed(0)} % of password sign-in; passkey sign-in ${(passkey / pwd).toFixed(1)}× (no argon2).`);
});
