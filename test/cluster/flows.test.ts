/**
 * Any node finishes any flow: two API node processes and two worker processes on one
 * PostgreSQL, Redis, S3 and mail provider (./rig.ts). Each flow alternates nodes, as a client
 * behind a round-robin load balancer would, and must behave as on a single node.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCollection, makeOperator, makeProject, USERS_FIELDS, type TestProject } from '../helpers/fixtures.js';
import { call, PLATFORM_MAIL_KEY, redisSkipReason, startRig, until, type Node, type Rig } from './rig.js';

let rig: Rig;
/** Real processes on a loaded 2-core machine: generous, the waits inside are bounded by until(). */
const TEST_TIMEOUT = 180_000;
let a: Node;
let b: Node;
let p: TestProject;
let ipSeq = 0;
/** A client address of its own (the nodes trust X-Forwarded-For): limits of one flow do not touch another. */
const client = () => ({ 'x-forwarded-for': `198.51.100.${++ipSeq}` });

if (redisSkipReason) console.warn(redisSkipReason);

beforeAll(async () => {
  rig = await startRig({ redis: true, env: { TRUST_PROXY: 'true' } });
  [a, b] = rig.api as [Node, Node];
  p = await makeProject(rig.env.ctx);
  await makeCollection(rig.env.ctx, p.id, 'notes', [{ key: 'title', type: 'String' }]);
  await makeCollection(rig.env.ctx, p.id, 'users', USERS_FIELDS);
}, 180_000);
afterAll(async () => {
  await rig?.stop();
}, 60_000);

describe('operator session and key rotation across nodes', () => {
  it('a login on one node is a session on the other; a key rotated on one is refused on the other as soon as the rotation answers', async () => {
    const op = await makeOperator(rig.env.ctx);
    const own = await makeProject(rig.env.ctx, op);
    await makeCollection(rig.env.ctx, own.id, 'notes');
    const login = await call(a, 'POST', '/api/auth/login', { headers: client(), body: { email: op.email, password: op.password } });
    expect(login.status, login.body).toBe(200);
    const auth = { authorization: `Bearer ${login.json().data.token}` };
    expect((await call(b, 'GET', '/api/auth/me', { headers: auth })).json().data.user).toMatchObject({ email: op.email });

    for (const node of [a, b]) expect((await call(node, 'GET', '/api/data/notes', { headers: own.sk })).status).toBe(200); // both caches warm

    const rotated = await call(b, 'POST', `/api/projects/${own.id}/api-key`, { headers: auth, body: { keyType: 'secret' } });
    expect(rotated.status, rotated.body).toBe(200);
    const old = await call(a, 'GET', '/api/data/notes', { headers: own.sk });
    expect(old.status).toBe(401);
    const fresh = { 'x-api-key': rotated.json().data.apiKey as string };
    for (const node of [a, b]) expect((await call(node, 'GET', '/api/data/notes', { headers: fresh })).status).toBe(200);
    expect((await call(b, 'GET', '/api/data/notes', { headers: own.sk })).status).toBe(401);
  }, TEST_TIMEOUT);
});

describe('end-user refresh tokens across nodes', () => {
  it('rotation alternates nodes, and a replayed token on either node revokes the family on both', async () => {
    const headers = { ...p.pk, ...client(), 'x-refresh-token-mode': 'header' };
    const signup = await call(a, 'POST', '/api/userAuth/signup', { headers, body: { email: `rt${Date.now()}@example.com`, password: 'correct horse 1' } });
    expect(signup.status, signup.body).toBe(201);
    const refresh = (node: Node, token: string) => call(node, 'POST', '/api/userAuth/refresh-token', { headers: { ...headers, 'x-refresh-token': token } });

    const first = signup.json().data.refreshToken as string;
    const r1 = await refresh(b, first);
    expect(r1.status, r1.body).toBe(200);
    const second = r1.json().data.refreshToken as string;
    const r2 = await refresh(a, second);
    expect(r2.status, r2.body).toBe(200);
    const third = r2.json().data.refreshToken as string;
    const me = await call(b, 'GET', '/api/userAuth/me', { headers: { ...p.pk, authorization: `Bearer ${r2.json().data.accessToken}` } });
    expect(me.status).toBe(200);

    expect((await refresh(b, first)).status).toBe(403); // replay of a used token, on the other node
    expect((await refresh(a, third)).status).toBe(403); // the whole family is gone, everywhere
    expect((await refresh(b, third)).status).toBe(403);
  }, TEST_TIMEOUT);
});

describe('social sign-in across nodes', () => {
  it('start on one node, callback on the other, exchange on the first', async () => {
    const owner = { authorization: `Bearer ${p.owner.token}` };
    const providers = await call(a, 'PATCH', `/api/projects/${p.id}/auth/providers`, {
      headers: owner,
      body: { github: { enabled: true, clientId: rig.github.clientId, clientSecret: rig.github.clientSecret } },
    });
    expect(providers.status, providers.body).toBe(200);
    rig.github.nextUser = { id: 4242, login: 'cluster', emails: [{ email: 'cluster-social@example.com', primary: true, verified: true }] };

    const start = await call(a, 'GET', `/api/userAuth/social/github/start?key=${p.publishableKey}`, { headers: client() });
    expect(start.status, start.body).toBe(302);
    const consent = await fetch(start.headers.get('location')!, { redirect: 'manual' });
    const back = new URL(consent.headers.get('location')!);
    const callback = await call(b, 'GET', back.pathname + back.search, { cookies: start.cookies, headers: client() });
    expect(callback.status, callback.body).toBe(302);
    const done = new URL(callback.headers.get('location')!);
    expect(done.searchParams.get('error')).toBeNull();
    expect(done.searchParams.get('isNewUser')).toBe('true');
    const token = new URLSearchParams(done.hash.slice(1)).get('token');
    const ex = await call(a, 'POST', '/api/userAuth/social/exchange', { headers: p.pk, body: { token, rtCode: done.searchParams.get('rtCode') } });
    expect(ex.status, ex.body).toBe(200);
    expect(ex.json().data.refreshToken).toBe(callback.cookies.refreshToken);
    // The code is single-use on every node.
    const again = await call(b, 'POST', '/api/userAuth/social/exchange', { headers: p.pk, body: { token, rtCode: done.searchParams.get('rtCode') } });
    expect(again.status).toBeGreaterThanOrEqual(400);
    expect(again.status).toBeLessThan(500);
  }, TEST_TIMEOUT);
});

describe('uploads across nodes', () => {
  it('upload-request on one node, PUT to S3, confirm on the other; the file is served and counted once', async () => {
    const bytes = 'hello from the cluster';
    const req = await call(a, 'POST', '/api/storage/upload-request', { headers: p.sk, body: { filename: 'c.txt', contentType: 'text/plain', size: bytes.length } });
    expect(req.status, req.body).toBe(200);
    const { signedUrl, filePath } = req.json().data as { signedUrl: string; filePath: string };
    const put = await fetch(signedUrl, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: bytes });
    expect(put.status).toBe(200);
    const confirm = await call(b, 'POST', '/api/storage/upload-confirm', { headers: p.sk, body: { filePath, size: bytes.length } });
    expect(confirm.status, confirm.body).toBe(200);
    const row = await rig.env.ctx.db.admin.selectFrom('files').select(['status', 'size']).where('path', '=', filePath).executeTakeFirstOrThrow();
    expect(row.status).not.toBe('pending');
    // A second confirm (a retry on the first node) does not count the bytes twice.
    const retry = await call(a, 'POST', '/api/storage/upload-confirm', { headers: p.sk, body: { filePath, size: bytes.length } });
    expect(retry.status).toBeLessThan(500);
    const used = await rig.env.ctx.db.admin
      .selectFrom('usage_counters').select('used').where('subject_id', '=', p.id).where('metric', '=', 'storage_bytes').executeTakeFirst();
    expect(Number(used?.used ?? 0)).toBe(bytes.length);
  }, TEST_TIMEOUT);
});

describe('mail across nodes', () => {
  it('sent through one node, delivered by a worker process, its log and live status read on the other', async () => {
    const subject = `cluster mail ${Date.now()}`;
    const sent = await call(a, 'POST', '/api/mail/send', { headers: p.sk, body: { to: 'someone@example.com', subject, text: 'hi' } });
    expect(sent.status, sent.body).toBe(200);
    const log = await until('the mail to be sent by a worker', async () => {
      const logs = (await call(b, 'GET', '/api/mail/logs', { headers: p.sk })).json().data.logs as Array<{ subject: string; status: string; providerEmailId: string }>;
      const mine = logs.find((l) => l.subject === subject);
      return mine && mine.status !== 'queued' && mine;
    });
    expect(log.status).toBe('sent');
    const live = await call(b, 'GET', `/api/mail/logs/${log.providerEmailId}`, { headers: p.sk });
    expect(live.status, live.body).toBe(200);
    expect(live.json().data.providerStatus).toMatchObject({ id: log.providerEmailId });
    expect(rig.resend.sentBy(PLATFORM_MAIL_KEY).filter((m) => m.subject === subject)).toHaveLength(1);
  }, TEST_TIMEOUT);
});

describe.skipIf(!!redisSkipReason)('rate limits shared through Redis', () => {
  it('operator login attempts from one address count on both nodes: the 11th is refused whichever node gets it', async () => {
    const ip = client();
    const attempt = (node: Node) => call(node, 'POST', '/api/auth/login', { headers: ip, body: { email: 'nobody@example.com', password: 'wrong password' } });
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await attempt(i % 2 ? b : a)).status);
    expect(statuses).toEqual(Array(10).fill(401));
    for (const node of [a, b]) {
      const limited = await attempt(node);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  }, TEST_TIMEOUT);
});
