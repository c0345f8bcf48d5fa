/**
 * Threat: aggregates as a side channel (Directus #8510/#23180, Twenty #25911 leaked through
 * group-by). An end user must never count, sum or group documents they could not list:
 * another user's private documents, another project's documents, or private documents
 * without a token. The PostgreSQL policies hold even when the code forgets the owner filter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectId } from '../../../src/lib/ids.js';
import { parseAggregateQuery } from '../../../src/modules/data/aggregate-query.js';
import { aggregateDocuments } from '../../../src/modules/data/aggregate-service.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, makeUserToken, type TestProject } from '../../helpers/fixtures.js';
import { api, createCollection } from './helpers.js';

let env: TestEnv;
let p: TestProject;
let other: TestProject;
let A: ReturnType<typeof api>;
const alice = objectId();
const bob = objectId();
let asAlice: Record<string, string>;
let asBob: Record<string, string>;
const fields = [{ key: 'tag', type: 'String' }, { key: 'amount', type: 'Number' }, { key: 'userId', type: 'String' }];

beforeAll(async () => {
  env = await createTestEnv();
  A = api(env);
  p = await makeProject(env.ctx);
  other = await makeProject(env.ctx);
  asAlice = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, alice)}` };
  asBob = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, bob)}` };
  await createCollection(env, p, 'notes', fields, { enabled: true, mode: 'private', ownerField: 'userId' });
  await createCollection(env, p, 'posts', fields, { enabled: true, mode: 'public-read' });
  for (const [who, n] of [[asAlice, 2], [asBob, 3]] as const) {
    for (let i = 0; i < n; i++) {
      expect((await A.post('/api/data/notes', who, { tag: 'secret', amount: 100 })).status).toBe(201);
      expect((await A.post('/api/data/posts', who, { tag: 'public', amount: 1 })).status).toBe(201);
    }
  }
  // Same collection names in another project, with many more documents.
  await createCollection(env, other, 'notes', fields);
  await createCollection(env, other, 'posts', fields);
  const many = Array.from({ length: 20 }, () => ({ tag: 'secret', amount: 1000 }));
  expect((await A.post('/api/data/notes/bulk', other.sk, many)).status).toBe(201);
  expect((await A.post('/api/data/posts/bulk', other.sk, many)).status).toBe(201);
});
afterAll(() => env.close());

const groups = async (url: string, h: Record<string, string>) => {
  const r = await A.get(url, h);
  expect(r.status).toBe(200);
  return r.body.data.groups;
};

describe('aggregates see exactly what a list sees', () => {
  it('private collection: each user aggregates only their own documents', async () => {
    expect(await groups('/api/data/notes/aggregate?groupBy=tag&count&sum=amount', asAlice)).toEqual([{ key: { tag: 'secret' }, count: 2, sum: { amount: 200 } }]);
    expect(await groups('/api/data/notes/aggregate?groupBy=userId&count', asBob)).toEqual([{ key: { userId: bob }, count: 3 }]);
    // Filtering on someone else's id cannot reach their documents either.
    expect(await groups(`/api/data/notes/aggregate?userId=${bob}`, asAlice)).toEqual([{ key: {}, count: 0 }]);
  });

  it('private collection without a user token is 401; the secret key sees all', async () => {
    const r = await A.get('/api/data/notes/aggregate', p.pk);
    expect(r.status).toBe(401);
    expect(await groups('/api/data/notes/aggregate?groupBy=userId&count&sort=count', p.sk)).toEqual([
      { key: { userId: alice }, count: 2 },
      { key: { userId: bob }, count: 3 },
    ]);
  });

  it('public-read collection: the publishable key aggregates every document of its project only', async () => {
    expect(await groups('/api/data/posts/aggregate?count&sum=amount', p.pk)).toEqual([{ key: {}, count: 5, sum: { amount: 5 } }]);
    expect(await groups('/api/data/posts/aggregate?count', other.pk)).toEqual([{ key: {}, count: 20 }]);
  });

  it('another project\'s documents are never counted, with any key or route', async () => {
    expect(await groups('/api/data/notes/aggregate?count&sum=amount', p.sk)).toEqual([{ key: {}, count: 5, sum: { amount: 500 } }]);
    expect(await groups(`/api/projects/${p.id}/data/notes/aggregate?count`, p.owner.auth)).toEqual([{ key: {}, count: 5 }]);
    expect((await A.get(`/api/projects/${other.id}/data/notes/aggregate?count`, p.owner.auth)).status).toBe(404);
  });
});

describe('native policies stop a code-level bypass', () => {
  it('an aggregate whose code forgets the owner filter still counts only the scoped user\'s rows', async () => {
    const col = (await env.ctx.collections.get(p.id, 'notes'))!;
    const access = { scope: { projectId: p.id, userId: alice, keyKind: 'publishable' as const }, secret: false, userId: alice, ownerFilter: null };
    const res = await aggregateDocuments(env.ctx, col, access, parseAggregateQuery({ count: '', sum: 'amount' }));
    expect(res.groups).toEqual([{ key: {}, count: 2, sum: { amount: 200 } }]);
  });
});
