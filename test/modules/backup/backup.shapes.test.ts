/**
 * Issue 32 item 2: an export of ANY project the API can build imports back. Each shape below is
 * built through the HTTP API only (dashboard routes, data, auth and storage routes), exported,
 * copied on this server with new ids while the source exists (?newIds=true), then restored with
 * the same ids after the source is deleted; both copies must show what the source showed.
 * The first shape is the one of the report: a collection created without RLS and without a
 * `userId` field, whose default owner field `userId` made every import a 400.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeOperator, type TestOperator, type TestProject } from '../../helpers/fixtures.js';
import { PASSWORD, uniqueEmail } from '../auth/helpers.js';
import { upload } from '../storage/helpers.js';
import { apiProject, call, exportOf, idsOf, importInto, labelled, must, view } from './helpers.js';

let env: TestEnv;
let owner: TestOperator;

const K = { key: 'k', type: 'String', required: true, unique: true };
const USERS = [
  { key: 'email', type: 'String', required: true, unique: true },
  { key: 'password', type: 'String', required: true },
  { key: 'username', type: 'String', unique: true },
  { key: 'badge', type: 'Number', unique: true },
  { key: 'name', type: 'String' },
];

interface Built {
  logins: Array<{ email: string; password: string }>;
}

const col = (p: TestProject, body: Record<string, unknown>) => must(env, 'POST', `/api/projects/${p.id}/collections`, p.owner.auth, body);
const bulk = (p: TestProject, name: string, docs: unknown[], headers: Record<string, string> = p.sk) => must(env, 'POST', `/api/data/${name}/bulk`, headers, docs);

/** Signs end users up through the public auth route; returns their logins and tokens. */
async function users(p: TestProject, n: number, extra: (i: number) => Record<string, unknown> = () => ({})) {
  const out: Array<{ email: string; password: string; id: string; as: Record<string, string> }> = [];
  for (let i = 0; i < n; i++) {
    const email = uniqueEmail('shape');
    const r = await must(env, 'POST', '/api/userAuth/signup', { ...p.pk, 'x-refresh-token-mode': 'header' }, { email, password: PASSWORD, ...extra(i) });
    out.push({ email, password: PASSWORD, id: r.data.user._id, as: { ...p.pk, authorization: `Bearer ${r.data.accessToken}` } });
  }
  return out;
}

const usersSchema = (p: TestProject, extra: Record<string, unknown> = {}) => col(p, { name: 'users', schema: USERS, ...extra });

/** Each shape: what it builds through the API. */
const SHAPES: Array<[string, (p: TestProject) => Promise<Built>]> = [
  ['no RLS, no userId field (default owner field undeclared), an empty schema', async (p) => {
    await col(p, { name: 'plain', schema: [K, { key: 'n', type: 'Number' }] });
    await col(p, { name: 'bare', schema: [] });
    await bulk(p, 'plain', Array.from({ length: 5 }, (_, i) => ({ k: `p${i}`, n: i })));
    return { logins: [] };
  }],
  ['a collection made with the secret key (POST /api/schemas): nested objects, arrays, defaults, dates', async (p) => {
    await must(env, 'POST', '/api/schemas', p.sk, {
      name: 'Events-2026',
      fields: [
        { name: 'k', type: 'string', required: true, unique: true },
        { name: 'when', type: 'date' },
        { name: 'done', type: 'boolean', default: false },
        { name: 'tags', type: 'array', items: { type: 'string' } },
        { name: 'place', type: 'object', fields: [{ name: 'city', type: 'string' }, { name: 'geo', type: 'object', fields: [{ name: 'lat', type: 'number' }] }] },
      ],
      indexes: [{ fields: ['when', 'done'] }],
    });
    await bulk(p, 'Events-2026', [
      { k: 'e1', when: '2026-03-04T05:06:07.000Z', tags: ['a', 'é', '日本'], place: { city: 'Lyon', geo: { lat: 45.76 } } },
      { k: 'e2', done: true, tags: [], place: { city: 'Oslo' } },
    ]);
    return { logins: [] };
  }],
  ['RLS public-read on a declared userId, documents written by end users', async (p) => {
    await usersSchema(p);
    await col(p, { name: 'posts', schema: [K, { key: 'title', type: 'String' }, { key: 'userId', type: 'String' }], rls: { enabled: true, mode: 'public-read' } });
    const us = await users(p, 2, (i) => ({ username: `user${i}`, badge: i }));
    for (const [i, u] of us.entries()) await bulk(p, 'posts', [{ k: `a${i}`, title: 'x' }, { k: `b${i}`, title: 'y' }], u.as);
    return { logins: us };
  }],
  ['RLS private on a declared owner field named in another case (ownerid → ownerId)', async (p) => {
    await usersSchema(p);
    await col(p, { name: 'notes', schema: [K, { key: 'ownerId', type: 'String' }], rls: { enabled: true, mode: 'private', ownerField: 'ownerid' } });
    const us = await users(p, 2, (i) => ({ username: `note${i}`, badge: 10 + i }));
    for (const [i, u] of us.entries()) await bulk(p, 'notes', [{ k: `n${i}a` }, { k: `n${i}b` }], u.as);
    return { logins: us };
  }],
  ['RLS owner-write-only with the default owner field undeclared', async (p) => {
    await usersSchema(p);
    await col(p, { name: 'logs', schema: [K, { key: 'msg', type: 'String' }], rls: { enabled: true, mode: 'owner-write-only', requireAuthForWrite: false } });
    await bulk(p, 'logs', [{ k: 'l1', msg: 'a' }, { k: 'l2', msg: 'b' }]);
    return { logins: await users(p, 1, () => ({ username: 'writer', badge: 1 })) };
  }],
  ['an owner field dropped from the schema after RLS was set (stale owner field)', async (p) => {
    await usersSchema(p);
    await col(p, { name: 'items', schema: [K, { key: 'userId', type: 'String' }], rls: { enabled: true, mode: 'private' } });
    const us = await users(p, 2, (i) => ({ username: `stale${i}`, badge: 20 + i }));
    for (const [i, u] of us.entries()) await bulk(p, 'items', [{ k: `i${i}` }], u.as);
    await must(env, 'PATCH', `/api/projects/${p.id}/collections/items`, p.owner.auth, { schema: [K, { key: 'UserId', type: 'String' }] });
    return { logins: us };
  }],
  ['users schema with unique fields, a disabled and a verified user, RLS on users', async (p) => {
    await usersSchema(p, { rls: { enabled: true, mode: 'private' } });
    const us = await users(p, 3, (i) => ({ username: `name${i}`, badge: 100 + i, name: `N ${i}` }));
    await must(env, 'POST', `/api/projects/${p.id}/users/${us[1]!.id}/disable`, p.owner.auth, {});
    await must(env, 'POST', `/api/projects/${p.id}/users/${us[2]!.id}/verify`, p.owner.auth, {});
    return { logins: [us[0]!, us[2]!] };
  }],
  ['full-text search (english, searchable fields) and realtime', async (p) => {
    await col(p, { name: 'articles', schema: [K, { key: 'title', type: 'String', searchable: true }, { key: 'body', type: 'String', searchable: true }], searchLanguage: 'english' });
    await col(p, { name: 'feed', schema: [K], realtime: true });
    await col(p, { name: 'quiet', schema: [K] });
    await must(env, 'PATCH', `/api/projects/${p.id}/collections/quiet/realtime`, p.owner.auth, { enabled: true });
    await bulk(p, 'articles', [{ k: 'a1', title: 'Running dogs', body: 'They ran' }, { k: 'a2', title: 'Cats', body: 'sleeping' }]);
    await bulk(p, 'feed', [{ k: 'f1' }]);
    return { logins: [] };
  }],
  ['unique fields, field and compound indexes, soft-deleted and restored documents', async (p) => {
    await col(p, {
      name: 'orders',
      schema: [K, { key: 'sku', type: 'String', unique: true }, { key: 'qty', type: 'Number' }, { key: 'status', type: 'String' }, { key: 'at', type: 'Date' }],
      indexes: [{ fields: ['status', 'qty'] }],
    });
    const made = await bulk(p, 'orders', Array.from({ length: 6 }, (_, i) => ({ k: `o${i}`, sku: `S${i}`, qty: i, status: i % 2 ? 'paid' : 'open', at: '2026-01-02T03:04:05.000Z' })));
    const ids = (made.data.insertedIds ?? made.data.map((d: { _id: string }) => d._id)) as string[];
    await must(env, 'DELETE', `/api/data/orders/${ids[0]}`, p.sk);
    await must(env, 'DELETE', `/api/data/orders/${ids[1]}`, p.sk);
    await must(env, 'POST', `/api/data/orders/${ids[1]}/restore`, p.sk, {});
    await must(env, 'PATCH', `/api/data/orders/${ids[2]}`, p.sk, { qty: 42 });
    return { logins: [] };
  }],
  ['references between documents (both directions) and to end users, and files', async (p) => {
    await usersSchema(p);
    await col(p, { name: 'authors', schema: [K, { key: 'favourite', type: 'String' }, { key: 'account', type: 'String' }] });
    await col(p, { name: 'books', schema: [K, { key: 'author', type: 'Ref', ref: 'authors' }, { key: 'meta', type: 'Object', fields: [{ key: 'editor', type: 'Ref', ref: 'authors' }] }, { key: 'userId', type: 'String' }], rls: { enabled: true, mode: 'private' } });
    const us = await users(p, 2, (i) => ({ username: `reader${i}`, badge: 200 + i }));
    const a = await must(env, 'POST', '/api/data/authors', p.sk, { k: 'ann', account: us[0]!.id }) as { _id: string };
    const b = (await must(env, 'POST', '/api/data/books', us[0]!.as, { k: 'b1', author: a._id, meta: { editor: a._id } })) as { _id: string };
    await must(env, 'POST', '/api/data/books', us[1]!.as, { k: 'b2', author: a._id });
    await must(env, 'PATCH', `/api/data/authors/${a._id}`, p.sk, { favourite: b._id });
    const up = await upload(env, us[0]!.as, 'report one.pdf', Buffer.from('%PDF-1'), 'application/pdf');
    if (up.res.statusCode !== 200) throw new Error(`upload ${up.res.statusCode} ${up.res.body}`);
    return { logins: us };
  }],
];

beforeAll(async () => {
  env = await createTestEnv({ RATE_LIMIT_SCALE: '100' });
  owner = await makeOperator(env.ctx, { plan: 'pro' });
});
afterAll(() => env.close());

describe('every shape of project the API builds survives export and import', () => {
  it.each(SHAPES)('%s', async (_label, build) => {
    const src = await apiProject(env, owner, 'source');
    const built = await build(src);
    const before = await view(env, src, built.logins);
    const archive = await exportOf(env, src);

    // A staging copy next to the source: new ids, owners and references rewritten.
    const staging = await apiProject(env, owner, 'staging');
    const dryCopy = await importInto(env, staging, archive, '?newIds=true&dryRun=true');
    expect(dryCopy.status, JSON.stringify(dryCopy.body)).toBe(200);
    expect(dryCopy.body.data.conflicts).toEqual([]);
    const copy = await importInto(env, staging, archive, '?newIds=true');
    expect(copy.status, JSON.stringify(copy.body)).toBe(200);
    const copied = await view(env, staging, built.logins);
    expect(labelled(copied)).toEqual(labelled(before));
    const old = new Set(idsOf(before));
    expect(idsOf(copied).filter((id) => old.has(id))).toEqual([]);

    // A restore: the source is gone, the same ids come back.
    expect((await call(env, 'DELETE', `/api/projects/${src.id}`, owner.auth)).status).toBe(200);
    const restored = await apiProject(env, owner, 'restored');
    const dry = await importInto(env, restored, archive, '?dryRun=true');
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    expect(dry.body.data.conflicts).toEqual([]);
    const real = await importInto(env, restored, archive);
    expect(real.status, JSON.stringify(real.body)).toBe(200);
    expect(await view(env, restored, built.logins)).toEqual(before);
    // The staging copy and the restore live side by side; clean up for the plan's project count.
    expect((await call(env, 'DELETE', `/api/projects/${staging.id}`, owner.auth)).status).toBe(200);
    expect((await call(env, 'DELETE', `/api/projects/${restored.id}`, owner.auth)).status).toBe(200);
  });
});
