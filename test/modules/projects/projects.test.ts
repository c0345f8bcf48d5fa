/** Dashboard projects: create (keys once), list, get (sanitised), settings, delete, limits. */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decrypt } from '../../../src/lib/crypto.js';
import { sha256Hex } from '../../../src/lib/crypto.js';
import { objectId } from '../../../src/lib/ids.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeCollection, makeOperator, USERS_FIELDS, type TestOperator } from '../../helpers/fixtures.js';

let env: TestEnv;
let op: TestOperator;
let other: TestOperator;

beforeAll(async () => {
  env = await createTestEnv();
  op = await makeOperator(env.ctx, { plan: 'pro' });
  other = await makeOperator(env.ctx);
});
afterAll(() => env.close());

const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, who: TestOperator, payload?: object) =>
  env.app.inject({ method, url, headers: who.auth, ...(payload ? { payload } : {}) });

async function createProject(who = op, payload: object = { name: 'Shop', siteUrl: 'https://shop.example.com' }) {
  const res = await call('POST', '/api/projects', who, payload);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

describe('POST /api/projects', () => {
  it('returns 201 with both raw keys once; only their SHA-256 is stored', async () => {
    const p = await createProject();
    expect(p.publishableKey).toMatch(/^pk_live_[A-Za-z0-9_-]{43}$/);
    expect(p.secretKey).toMatch(/^sk_live_[A-Za-z0-9_-]{43}$/);
    expect(p).toMatchObject({ name: 'Shop', siteUrl: 'https://shop.example.com', isAuthEnabled: true, collections: [] });
    const row = await env.ctx.db.admin.selectFrom('projects').selectAll().where('id', '=', p._id).executeTakeFirstOrThrow();
    expect(row.publishable_key_hash).toBe(sha256Hex(p.publishableKey));
    expect(row.secret_key_hash).toBe(sha256Hex(p.secretKey));
    const again = await call('GET', `/api/projects/${p._id}`, op);
    expect(again.body).not.toContain(p.secretKey);
    expect(again.body).not.toContain(p.publishableKey);
  });

  it('accepts http only on loopback hosts; rejects other URLs and bad names with 400', async () => {
    await createProject(other, { name: 'local', siteUrl: 'http://localhost:5173' });
    for (const siteUrl of ['http://shop.example.com', 'ftp://x.y', 'not a url']) {
      const res = await call('POST', '/api/projects', other, { name: 'x', siteUrl });
      expect(res.statusCode, siteUrl).toBe(400);
    }
    expect((await call('POST', '/api/projects', other, { name: '' })).statusCode).toBe(400);
    expect((await call('POST', '/api/projects', other, { name: { a: 1 } })).statusCode).toBe(400);
  });

  it('enforces the plan project limit with a clear 403', async () => {
    const limited = await makeOperator(env.ctx);
    for (let i = 0; i < 3; i++) await createProject(limited, { name: `p${i}` });
    const res = await call('POST', '/api/projects', limited, { name: 'one too many' });
    expect(res.statusCode).toBe(403);
    expect(res.json().message).toBe('Project limit reached (3). Please upgrade your plan to create more projects.');
  });
});

describe('GET /api/projects and /:projectId', () => {
  it('lists only my projects with collectionsCount and usage metrics', async () => {
    const p = await createProject(op, { name: 'Listed' });
    await makeCollection(env.ctx, p._id, 'posts');
    await env.ctx.db.admin.insertInto('usage_counters').values({ subject_id: p._id, metric: 'storage_bytes', period: '', used: 1234 }).execute();
    const res = await call('GET', '/api/projects', op);
    expect(res.statusCode).toBe(200);
    const entry = res.json().data.find((x: { _id: string }) => x._id === p._id);
    expect(entry).toMatchObject({ name: 'Listed', collectionsCount: 1, storageUsed: 1234, metrics: { storage: { used: 1234, limit: 1024 * 1024 * 1024 }, database: { used: 0 } } });
    const ids = res.json().data.map((x: { _id: string }) => x._id);
    const others = (await call('GET', '/api/projects', other)).json().data.map((x: { _id: string }) => x._id);
    expect(ids.some((id: string) => others.includes(id))).toBe(false);
  });

  it('a project shows has… flags, collections with rls, and the users model without password', async () => {
    const p = await createProject(op, { name: 'Detailed' });
    await makeCollection(env.ctx, p._id, 'users', USERS_FIELDS);
    const res = await call('GET', `/api/projects/${p._id}`, op);
    expect(res.statusCode).toBe(200);
    const d = res.json().data;
    expect(d).toMatchObject({
      hasProviderApiKey: false, hasResendApiKey: false, hasAiKey: false,
      authProviders: { github: { enabled: false, hasClientSecret: false }, google: { enabled: false, hasClientSecret: false } },
      allowedDomains: ['*'],
    });
    expect(d.collections[0].rls).toMatchObject({ enabled: false, mode: 'public-read' });
    expect(d.collections[0].model.map((f: { key: string }) => f.key)).not.toContain('password');
    for (const hidden of ['jwt_secret', 'jwtSecret', 'secret_key_hash', 'publishable_key_hash', '"encrypted"', '"iv"']) {
      expect(res.body).not.toContain(hidden);
    }
  });

  it("another operator's project is 404, an unknown id 404, a malformed id 400", async () => {
    const p = await createProject(op, { name: 'Private' });
    expect((await call('GET', `/api/projects/${p._id}`, other)).statusCode).toBe(404);
    expect((await call('PATCH', `/api/projects/${p._id}`, other, { name: 'x' })).statusCode).toBe(404);
    expect((await call('DELETE', `/api/projects/${p._id}`, other)).statusCode).toBe(404);
    expect((await call('POST', `/api/projects/${p._id}/api-key`, other, { keyType: 'secret' })).statusCode).toBe(404);
    expect((await call('GET', `/api/projects/${objectId()}`, op)).statusCode).toBe(404);
    expect((await call('GET', '/api/projects/not-an-id', op)).statusCode).toBe(400);
  });

  it('requires a dashboard session (401)', async () => {
    expect((await env.app.inject({ method: 'GET', url: '/api/projects' })).statusCode).toBe(401);
  });
});

describe('PATCH /api/projects/:projectId', () => {
  it('stores the mail key encrypted, returns only has… flags, and null clears it', async () => {
    const p = await createProject(op, { name: 'Mail' });
    const res = await call('PATCH', `/api/projects/${p._id}`, op, { resendApiKey: 're_abc_123', providerFromEmail: 'Shop <hi@shop.example.com>' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ hasProviderApiKey: true, hasResendApiKey: true, providerFromEmail: 'Shop <hi@shop.example.com>' });
    expect(res.body).not.toContain('re_abc_123');
    const row = await env.ctx.db.admin.selectFrom('projects').select('secrets').where('id', '=', p._id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row.secrets)).not.toContain('re_abc_123');
    expect(decrypt(env.config.encryptionKey, row.secrets.mailApiKey)).toBe('re_abc_123');
    const cleared = await call('PATCH', `/api/projects/${p._id}`, op, { providerApiKey: null, providerFromEmail: '' });
    expect(cleared.json().data).toMatchObject({ hasProviderApiKey: false, providerFromEmail: '' });
  });

  it('updates name, site URL ("" clears), domains and auth flags', async () => {
    const p = await createProject(op, { name: 'Settings', siteUrl: 'https://a.example.com' });
    const res = await call('PATCH', `/api/projects/${p._id}`, op, {
      name: ' Renamed ', siteUrl: '', allowedDomains: [' https://app.example.com ', '*.example.org', ''], isAuthEnabled: false, requireEmailVerification: true,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({
      name: 'Renamed', siteUrl: null, allowedDomains: ['https://app.example.com', '*.example.org'], isAuthEnabled: false, requireEmailVerification: true,
    });
    const record = await env.ctx.projects.byId(p._id);
    expect(record?.settings.allowedDomains).toEqual(['https://app.example.com', '*.example.org']);
  });

  it('rejects bad values and wrong types with 400', async () => {
    const p = await createProject(op, { name: 'Bad' });
    const cases: object[] = [
      { providerApiKey: 'sk_not_resend' }, { resendFromEmail: 'nope' }, { name: '   ' }, { siteUrl: 'http://evil.example.com' },
      { isAuthEnabled: 'maybe' }, { allowedDomains: { a: 1 } }, { allowedDomains: ['bad domain!'] }, { unknownField: 1 },
    ];
    for (const payload of cases) {
      const res = await call('PATCH', `/api/projects/${p._id}`, op, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().success).toBe(false);
    }
  });
});

describe('DELETE /api/projects/:projectId', () => {
  it('runs the deletion hooks, removes the project, its rows and its counters', async () => {
    const p = await createProject(op, { name: 'Doomed' });
    const col = await makeCollection(env.ctx, p._id, 'notes');
    await env.ctx.db.admin.insertInto('documents').values({ project_id: p._id, collection_id: col.id, id: objectId(), owner_id: null, data: JSON.stringify({ a: 1 }) as never }).execute();
    await env.ctx.db.admin.insertInto('usage_counters').values({ subject_id: p._id, metric: 'storage_bytes', period: '', used: 9 }).execute();
    const seen: string[] = [];
    env.ctx.hooks.projectDeleting.push(async (id) => void seen.push(id), async () => { throw new Error('bucket unreachable'); });
    try {
      const res = await call('DELETE', `/api/projects/${p._id}`, op);
      expect(res.statusCode).toBe(200);
      expect(res.json().message).toBe('Project and all associated resources deleted successfully');
    } finally {
      env.ctx.hooks.projectDeleting.splice(-2, 2);
    }
    expect(seen).toEqual([p._id]);
    expect(env.logs.some((l) => l.includes('project deletion hook failed'))).toBe(true);
    const db = env.ctx.db.admin;
    expect(await db.selectFrom('projects').select('id').where('id', '=', p._id).execute()).toEqual([]);
    expect(await db.selectFrom('collections').select('id').where('project_id', '=', p._id).execute()).toEqual([]);
    expect(await db.selectFrom('documents').select('id').where('project_id', '=', p._id).execute()).toEqual([]);
    const partition = await sql`SELECT relname FROM pg_class WHERE relname = ${`documents_${col.id}`}`.execute(db);
    expect(partition.rows).toEqual([]);
    expect(await db.selectFrom('usage_counters').select('used').where('subject_id', '=', p._id).execute()).toEqual([]);
    expect(await env.ctx.projects.resolveKey(p.secretKey)).toBeNull();
    expect((await call('DELETE', `/api/projects/${p._id}`, op)).statusCode).toBe(404);
  });
});

describe('OpenAPI', () => {
  it('documents the dashboard routes from their schemas', async () => {
    const res = await env.app.inject({ method: 'GET', url: '/docs/json' });
    expect(res.statusCode).toBe(200);
    const paths = Object.keys(res.json().paths);
    for (const p of ['/api/auth/login', '/api/projects', '/api/projects/{projectId}', '/api/projects/{projectId}/api-key', '/api/admin/operators/{id}/plan']) {
      expect(paths).toContain(p);
    }
  });
});
