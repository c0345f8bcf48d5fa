/**
 * Threats: replaying an OAuth callback (state is single use, 10 min), replaying or stealing an
 * rtCode (single use, 60 s, bound to the project and to the access token). Also: a second API
 * node finishes a flow the first began (state and rtCode live in PostgreSQL).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boot, type Booted } from '../../../src/boot.js';
import { loadConfig } from '../../../src/config.js';
import { buildApp, type App } from '../../../src/server.js';
import type { TestProject } from '../../helpers/fixtures.js';
import { createSocialEnv, fragmentToken, runFlow, socialProject, type SocialEnv } from './helpers.js';

let s: SocialEnv;
let p: TestProject;

beforeAll(async () => {
  s = await createSocialEnv();
  p = await socialProject(s);
});
afterAll(() => s.close());

const exchange = (proj: TestProject, token: string, rtCode: string | null, app: App = s.env.app) =>
  app.inject({ method: 'POST', url: '/api/userAuth/social/exchange', headers: proj.pk, payload: { token, rtCode } });

let n = 0;
const freshUser = () => {
  n++;
  s.github.nextUser = { id: 9000 + n, login: `replay${n}`, emails: [{ email: `replay${n}@example.com`, primary: true, verified: true }] };
};

describe('OAuth state', () => {
  it('a replayed callback (same state) is 400 Invalid or expired OAuth state, and no code is exchanged twice', async () => {
    freshUser();
    const r = await runFlow(s.env.app, 'github', p);
    expect(r.status).toBe(302);
    const before = s.github.tokenRequests;
    const replay = await s.env.app.inject({ method: 'GET', url: r.callbackPath });
    expect(replay.statusCode).toBe(400);
    expect(replay.json().message).toBe('Invalid or expired OAuth state');
    expect(s.github.tokenRequests).toBe(before);
  });

  it('an unknown state, or none, is 400', async () => {
    const res = await s.env.app.inject({ method: 'GET', url: '/api/userAuth/social/github/callback?code=x&state=forged' });
    expect(res.statusCode).toBe(400);
    const none = await s.env.app.inject({ method: 'GET', url: '/api/userAuth/social/github/callback?code=x' });
    expect(none.statusCode).toBe(400);
  });

  it('a state older than 10 minutes is refused', async () => {
    freshUser();
    const start = await s.env.app.inject({ method: 'GET', url: `/api/userAuth/social/github/start?key=${p.publishableKey}` });
    const consent = await fetch(start.headers.location as string, { redirect: 'manual' });
    const back = new URL(consent.headers.get('location')!);
    s.env.clock.advance(10 * 60 * 1000 + 1000);
    const res = await s.env.app.inject({ method: 'GET', url: back.pathname + back.search });
    expect(res.statusCode).toBe(400);
  });

  it('a state issued for GitHub cannot finish on the Google callback', async () => {
    freshUser();
    const start = await s.env.app.inject({ method: 'GET', url: `/api/userAuth/social/github/start?key=${p.publishableKey}` });
    const state = new URL(start.headers.location as string).searchParams.get('state');
    const res = await s.env.app.inject({ method: 'GET', url: `/api/userAuth/social/google/callback?code=abc&state=${state}` });
    expect(res.statusCode).toBe(302);
    expect(new URL(res.headers.location as string).searchParams.get('error')).toBe('OAuth state mismatch');
  });
});

describe('rtCode exchange', () => {
  it('works once; a replay is 400 Invalid or expired refresh token exchange code', async () => {
    freshUser();
    const url = (await runFlow(s.env.app, 'github', p)).redirect!;
    const token = fragmentToken(url);
    const rtCode = url.searchParams.get('rtCode');
    expect((await exchange(p, token, rtCode)).statusCode).toBe(200);
    const replay = await exchange(p, token, rtCode);
    expect(replay.statusCode).toBe(400);
    expect(replay.json().message).toBe('Invalid or expired refresh token exchange code');
  });

  it('expires after 60 seconds', async () => {
    freshUser();
    const url = (await runFlow(s.env.app, 'github', p)).redirect!;
    s.env.clock.advance(61_000);
    const res = await exchange(p, fragmentToken(url), url.searchParams.get('rtCode'));
    expect(res.statusCode).toBe(400);
  });

  it("is bound to the project: another project's key cannot redeem it (and it stays usable)", async () => {
    freshUser();
    const other = await socialProject(s);
    const url = (await runFlow(s.env.app, 'github', p)).redirect!;
    const stolen = await exchange(other, fragmentToken(url), url.searchParams.get('rtCode'));
    expect(stolen.statusCode).toBe(400);
    expect((await exchange(p, fragmentToken(url), url.searchParams.get('rtCode'))).statusCode).toBe(200);
  });

  it('a wrong access token consumes the code with 403', async () => {
    freshUser();
    const url = (await runFlow(s.env.app, 'github', p)).redirect!;
    const res = await exchange(p, 'not-the-token', url.searchParams.get('rtCode'));
    expect([res.statusCode, res.json().message]).toEqual([403, 'Invalid refresh token exchange payload']);
    expect((await exchange(p, fragmentToken(url), url.searchParams.get('rtCode'))).statusCode).toBe(400);
  });

  it('400 when a field is missing', async () => {
    const res = await s.env.app.inject({ method: 'POST', url: '/api/userAuth/social/exchange', headers: p.pk, payload: { rtCode: 'x' } });
    expect([res.statusCode, res.json().message]).toEqual([400, 'rtCode and token are required']);
  });
});

describe('several API nodes', () => {
  let second: Booted;
  let appB: App;

  beforeAll(async () => {
    const config = loadConfig({
      NODE_ENV: 'test', LOG_LEVEL: 'warn', ...s.providerEnv,
      PLINTH_DATA_DIR: s.env.config.dataDir, DATABASE_URL: s.env.databaseUrl,
    });
    second = await boot(config, { clock: s.env.clock, skipMigrations: true });
    appB = await buildApp(second.ctx);
  });
  afterAll(async () => {
    await appB.close();
    await second.close();
  });

  it('node B finishes the callback node A began; node A redeems the rtCode node B issued; refresh works on both', async () => {
    freshUser();
    const r = await runFlow(s.env.app, 'github', p, appB);
    expect(r.status).toBe(302);
    const url = r.redirect!;
    expect(url.searchParams.get('isNewUser')).toBe('true');
    const ex = await exchange(p, fragmentToken(url), url.searchParams.get('rtCode'));
    expect(ex.statusCode).toBe(200);
    const rotated = await appB.inject({ method: 'POST', url: '/api/userAuth/refresh-token', headers: { ...p.pk, 'x-refresh-token': ex.json().data.refreshToken } });
    expect(rotated.statusCode).toBe(200);
    const replayOnA = await s.env.app.inject({ method: 'POST', url: '/api/userAuth/refresh-token', headers: { ...p.pk, 'x-refresh-token': ex.json().data.refreshToken } });
    expect(replayOnA.statusCode).toBe(403);
  });
});
