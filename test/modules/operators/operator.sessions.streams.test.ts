/**
 * Threat: a stolen or forgotten console session keeps watching a project's records live after
 * its owner revoked it (from the sessions list, by logging out, or by revoking every other
 * session). The console's stream must end at once on revocation, its ticket must open nothing
 * afterwards, other sessions' streams must go on, and no console ticket may outlive the
 * operator's access token (docs/realtime.md "The console's streams").
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { openStream } from '../realtime/sse.js';
import { login, register } from './helpers.js';
import { OPERATOR_ACCESS_TTL_SECONDS, signOperatorToken } from '../../../src/modules/operators/tokens.js';

let env: TestEnv;
let base: string;
let projectId: string;
const email = 'streams@example.com';

beforeAll(async () => {
  env = await createTestEnv();
  await env.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(env.app.server.address() as AddressInfo).port}`;
  await register(env, email);
  await env.ctx.db.admin.updateTable('operators').set({ is_verified: true }).where('email', '=', email).execute();
  const a = await signIn();
  const created = await env.app.inject({ method: 'POST', url: '/api/projects', headers: a.auth, payload: { name: 'Live' } });
  expect(created.statusCode, created.body).toBe(201);
  projectId = created.json().data._id;
  const col = await env.app.inject({
    method: 'POST',
    url: `/api/projects/${projectId}/collections`,
    headers: a.auth,
    payload: { name: 'posts', realtime: true, schema: [{ key: 'title', type: 'String' }] },
  });
  expect(col.statusCode, col.body).toBe(201);
});
afterAll(() => env.close());

async function signIn() {
  const res = await login(env, email, 'long enough pw', { 'x-refresh-token-mode': 'header' });
  expect(res.statusCode).toBe(200);
  const { token, refreshToken } = res.json().data as { token: string; refreshToken: string };
  return { token, auth: { authorization: `Bearer ${token}` }, refreshToken };
}

async function sessionIdOf(auth: Record<string, string>): Promise<string> {
  const res = await env.app.inject({ method: 'GET', url: '/api/auth/sessions', headers: auth });
  return (res.json().data.sessions as Array<{ id: string; current: boolean }>).find((s) => s.current)!.id;
}

async function ticketFor(auth: Record<string, string>): Promise<string> {
  const res = await env.app.inject({ method: 'POST', url: `/api/projects/${projectId}/realtime/ticket`, headers: auth, payload: { subscriptions: [{ collection: 'posts' }] } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data.ticket as string;
}

async function liveStream(auth: Record<string, string>) {
  const ticket = await ticketFor(auth);
  const stream = await openStream(`${base}/api/realtime?ticket=${encodeURIComponent(ticket)}`);
  await stream.waitFor((e) => e.event === 'ready');
  return { ticket, stream };
}

const reopen = (ticket: string) => openStream(`${base}/api/realtime?ticket=${encodeURIComponent(ticket)}`);
const write = (auth: Record<string, string>, title: string) =>
  env.app.inject({ method: 'POST', url: `/api/projects/${projectId}/data/posts`, headers: auth, payload: { title } });
const payloadOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as { exp: number };

describe("a revoked console session's live stream", () => {
  it('ends at once when the session is revoked from another; its ticket opens nothing; the other stream goes on', async () => {
    const a = await signIn();
    const b = await signIn();
    const sa = await liveStream(a.auth);
    const sb = await liveStream(b.auth);
    try {
      const del = await env.app.inject({ method: 'DELETE', url: `/api/auth/sessions/${await sessionIdOf(b.auth)}`, headers: a.auth });
      expect(del.statusCode).toBe(200);
      const revoked = await sb.stream.waitFor((e) => e.event === 'revoked', 3000);
      expect(revoked.data).toMatchObject({ reason: expect.stringContaining('session has ended') });
      await sb.stream.closed;
      // Within its 60 s, the ticket would still be valid by its signature alone.
      expect((await reopen(sb.ticket)).status).toBe(401);
      expect((await write(a.auth, 'after the revocation')).statusCode).toBe(201);
      const seen = await sa.stream.waitFor((e) => e.event === 'create');
      expect(JSON.stringify(seen.data)).toContain('after the revocation');
    } finally {
      sa.stream.close();
      sb.stream.close();
    }
  });

  it('ends on logout', async () => {
    const b = await signIn();
    const sb = await liveStream(b.auth);
    try {
      const out = await env.app.inject({ method: 'POST', url: '/api/auth/logout', payload: { refreshToken: b.refreshToken } });
      expect(out.statusCode).toBe(200);
      await sb.stream.waitFor((e) => e.event === 'revoked', 3000);
      await sb.stream.closed;
      expect((await reopen(sb.ticket)).status).toBe(401);
    } finally {
      sb.stream.close();
    }
  });

  it("revoke-others ends every other session's stream and keeps this one's", async () => {
    const a = await signIn();
    const b = await signIn();
    const c = await signIn();
    const sa = await liveStream(a.auth);
    const sb = await liveStream(b.auth);
    const sc = await liveStream(c.auth);
    try {
      const res = await env.app.inject({ method: 'POST', url: '/api/auth/sessions/revoke-others', headers: a.auth });
      expect(res.statusCode, res.body).toBe(200);
      await sb.stream.waitFor((e) => e.event === 'revoked', 3000);
      await sc.stream.waitFor((e) => e.event === 'revoked', 3000);
      expect((await write(a.auth, 'still watched')).statusCode).toBe(201);
      await sa.stream.waitFor((e) => e.event === 'create');
      expect(sa.stream.events.some((e) => e.event === 'revoked')).toBe(false);
    } finally {
      for (const s of [sa, sb, sc]) s.stream.close();
    }
  });

  it("ends when the operator's access token expires, as an end user's does; the ticket no later", async () => {
    const a = await signIn();
    const { sub, sid } = JSON.parse(Buffer.from(a.token.split('.')[1]!, 'base64url').toString()) as { sub: string; sid: string };
    // A token of the same session with 3 s left (issued 15 min minus 3 s ago).
    const nearlyOver = await signOperatorToken(env.ctx.config.dashboardJwtSecret, sub, new Date(env.ctx.clock.now().getTime() - (OPERATOR_ACCESS_TTL_SECONDS - 3) * 1000), undefined, sid);
    const auth = { authorization: `Bearer ${nearlyOver}` };
    const { ticket, stream } = await liveStream(auth);
    try {
      expect(payloadOf(ticket).exp).toBeLessThanOrEqual(payloadOf(nearlyOver).exp);
      const expired = await stream.waitFor((e) => e.event === 'expired', 6000);
      expect(expired.data).toMatchObject({ reason: expect.any(String) });
      await stream.closed;
    } finally {
      stream.close();
    }
  });
});
