/**
 * The published @urbackend/sdk (0.4.8), unchanged, against the app listening on 127.0.0.1:
 * signUp, login, me, refreshToken, changePassword, logout, socialExchange.
 */
import type { AddressInfo } from 'node:net';
import urBackend from '@urbackend/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestEnv } from '../../helpers/context.js';
import type { TestProject } from '../../helpers/fixtures.js';
import { authTestEnv, uniqueEmail } from './helpers.js';

let env: TestEnv;
let p: TestProject;
let baseUrl: string;

beforeAll(async () => {
  ({ env, p } = await authTestEnv());
  await env.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(env.app.server.address() as AddressInfo).port}`;
});
afterAll(() => env.close());

describe('@urbackend/sdk auth module', () => {
  it('signUp → me → refreshToken → changePassword → login → logout', async () => {
    const client = urBackend({ apiKey: p.publishableKey, baseUrl });
    const email = uniqueEmail('sdk');
    const signed = await client.auth.signUp({ email, password: 'sdk password 1', name: 'Sdk' });
    expect(signed.accessToken).toBeTruthy();
    expect(signed.refreshToken).toBeTruthy();
    const me = await client.auth.me();
    expect(me).toMatchObject({ email, name: 'Sdk' });
    const refreshed = await client.auth.refreshToken();
    expect(refreshed.accessToken).toBeTruthy();
    expect(refreshed.refreshToken).not.toBe(signed.refreshToken);
    const changed = await client.auth.changePassword({ currentPassword: 'sdk password 1', newPassword: 'sdk password 2' });
    expect(changed).toMatchObject({ message: 'Password changed successfully' });
    const logged = await client.auth.login({ email, password: 'sdk password 2' });
    expect(logged.user).toMatchObject({ email });
    const out = await client.auth.logout();
    expect(out).toMatchObject({ message: 'Logged out successfully' });
    const stale = await client.auth.refreshToken(logged.refreshToken).catch((e: Error) => e);
    expect(stale).toMatchObject({ name: 'AuthError', statusCode: 403 });
  });

  it('wrong credentials surface as AuthError 401', async () => {
    const client = urBackend({ apiKey: p.publishableKey, baseUrl });
    const err = await client.auth.login({ email: uniqueEmail('none'), password: 'whatever 1' }).catch((e: Error) => e);
    expect(err).toMatchObject({ name: 'AuthError', statusCode: 401, message: 'Invalid email or password' });
  });

  it('after the access token expires the SDK refreshes and retries me()', async () => {
    const client = urBackend({ apiKey: p.publishableKey, baseUrl });
    const email = uniqueEmail('sdk');
    await client.auth.signUp({ email, password: 'sdk password 1' });
    env.clock.advance(16 * 60 * 1000);
    // me() passes its stored token explicitly, so call through request() as data calls do.
    const res = await client.request('GET', '/api/userAuth/me');
    expect(res).toMatchObject({ email });
  });

  it('socialExchange with an unknown code is rejected with the documented message', async () => {
    const client = urBackend({ apiKey: p.publishableKey, baseUrl });
    const err = await client.auth.socialExchange({ token: 'x', rtCode: 'nope' }).catch((e: Error) => e);
    expect((err as Error).message).toBe('Invalid or expired refresh token exchange code');
  });
});
