/**
 * Lists and gets without `fields` or `populate` go out as PostgreSQL wrote each document's JSON
 * (view.ts, `documentJson`), not parsed and serialized again. The threat is a page that differs
 * from the parsed one: a value mangled by the splice (escapes, non-ASCII, an empty document,
 * numbers), a member lost or added, a hidden field shown to a caller who may not see it. Every
 * case below reads the same page both ways and asks for the same JSON value.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectId } from '../../../src/lib/ids.js';
import { isoFromMs } from '../../../src/lib/iso-time.js';
import type { Access } from '../../../src/modules/data/access.js';
import { parseListQuery } from '../../../src/modules/data/query.js';
import { getDocument, getDocumentJson, listDocuments, listDocumentsJson } from '../../../src/modules/data/read-service.js';
import type { CollectionDef } from '../../../src/modules/collections/cache.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, makeUserToken, type TestProject } from '../../helpers/fixtures.js';
import { api, createCollection } from './helpers.js';

let env: TestEnv;
let p: TestProject;
let A: ReturnType<typeof api>;
let col: CollectionDef;
const alice = objectId();
const ids: string[] = [];

/** What a client might store: escapes, control characters, non-ASCII, nesting, numbers at the edges. */
const VALUES: Array<Record<string, unknown>> = [
  { title: 'quotes " and \\ backslash', n: 0, meta: { nested: { deep: [1, 'two', null, true] } } },
  { title: 'control \u0001\u001f tab\t newline\n', n: -1.5, tags: [] },
  { title: 'Ελληνικά, café, 東京 🚀 ünïcødé e\u0301 \u2028\u2029 end', n: 1e21 },
  { title: '', n: 9007199254740991, extra: { '': 'empty key', 'with "quote"': 1 } },
  { title: 'small', n: 0.1 + 0.2, flag: false, nothing: null },
  { n: 5e-324 },
  {},
];

/** What `readAccess` gives each caller of this collection (public-read, owner-hidden fields). */
const accessOf = (keyKind: 'secret' | 'publishable', userId: string | null = null): Access =>
  keyKind === 'secret'
    ? { scope: { projectId: p.id, keyKind }, secret: true, userId: null, ownerFilter: null }
    : { scope: { projectId: p.id, userId, keyKind }, secret: false, userId, ownerFilter: null };

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  A = api(env);
  await createCollection(env, p, 'notes', [
    { key: 'title', type: 'String' },
    { key: 'n', type: 'Number' },
    { key: 'owner', type: 'String' },
    { key: 'phone', type: 'String', hidden: 'owner' },
    { key: 'secretNote', type: 'String', hidden: 'secret' },
  ], { enabled: true, mode: 'public-read', ownerField: 'owner' });
  const asAlice = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, alice)}` };
  for (const v of VALUES) {
    const made = await A.post('/api/data/notes', asAlice, { ...v, phone: '+33 6 — Zoë' });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    ids.push(made.body.data?._id ?? made.body._id);
  }
  expect((await A.post('/api/data/notes', p.sk, { title: 'not alice', secretNote: 'moderation ✋' })).status).toBe(201);
  expect((await A.post('/api/data/notes', p.sk, {})).status).toBe(201); // no field at all: data is {}
  expect((await A.del(`/api/data/notes/${ids[1]}`, p.sk)).status).toBe(200);
  col = (await env.ctx.collections.get(p.id, 'notes'))!;
});
afterAll(() => env.close());

const QUERIES: Array<Record<string, string>> = [
  {},
  { include_deleted: 'true' },
  { meta: 'false', include_deleted: 'true' },
  { include_total: 'true', limit: '3' },
  { limit: '2', page: '2' },
  { page: '99' },
  { sort: 'n' },
  { sort: '-title', limit: '4' },
  { n_gte: '0', sort: 'n' },
  { title: 'small' },
  { cursor: '', limit: '3' },
  { cursor: '', limit: '100', include_deleted: 'true' },
];

const CALLERS = [
  { who: 'secret key', access: () => accessOf('secret') },
  { who: 'signed-out publishable key', access: () => accessOf('publishable') },
  { who: 'owner with a publishable key', access: () => accessOf('publishable', alice) },
];

describe('pages sent as PostgreSQL wrote their documents', () => {
  for (const { who, access: accessFor } of CALLERS) {
    it.each(QUERIES)(`a list for the ${who} is the parsed page (%o)`, async (raw) => {
      const access = accessFor();
      const q = parseListQuery(raw);
      const parsed = await listDocuments(env.ctx, col, access, q);
      expect(JSON.parse(await listDocumentsJson(env.ctx, col, access, q))).toEqual(parsed);
      expect(parsed.items.length > 0).toBe(raw.page !== '99');
    });

    it(`every get for the ${who} is the parsed document, deleted ones included`, async () => {
      const access = accessFor();
      for (const id of ids) {
        for (const raw of [{}, { include_deleted: 'true' }, { meta: 'false', include_deleted: 'true' }]) {
          const q = parseListQuery(raw);
          const parsed = await getDocument(env.ctx, col, access, id, q).catch((e: { code?: string }) => e.code);
          const spliced = await getDocumentJson(env.ctx, col, access, id, q).then((t) => JSON.parse(t.json), (e: { code?: string }) => e.code);
          expect(spliced).toEqual(parsed);
        }
      }
    });
  }

  it('hidden fields stay hidden on the spliced path: the owner sees its own, others and the signed-out see neither', async () => {
    const page = async (access: Access) => {
      const res = await listDocumentsJson(env.ctx, col, access, parseListQuery({ limit: '100' }));
      return JSON.parse(res).items as Array<Record<string, unknown>>;
    };
    const bySecret = await page(accessOf('secret'));
    expect(bySecret.filter((d) => d.phone === '+33 6 — Zoë')).toHaveLength(VALUES.length - 1);
    expect(bySecret.some((d) => d.secretNote === 'moderation ✋')).toBe(true);
    for (const d of await page(accessOf('publishable'))) {
      expect(d).not.toHaveProperty('phone');
      expect(d).not.toHaveProperty('secretNote');
    }
    const own = await page(accessOf('publishable', alice));
    expect(own.filter((d) => d.phone === '+33 6 — Zoë')).toHaveLength(VALUES.length - 1);
    for (const d of own) expect(d).not.toHaveProperty('secretNote');
  });

  it('the HTTP answer carries the stored values exactly, through the envelope', async () => {
    const res = await env.app.inject({ method: 'GET', url: '/api/data/notes?limit=100&sort=createdAt', headers: p.sk });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = res.json();
    expect(body).toMatchObject({ success: true, message: 'Data fetched successfully' });
    const stored = body.data.items.filter((d: { _id: string }) => ids.includes(d._id));
    expect(stored.map((d: Record<string, unknown>) => {
      const { _id, createdAt, updatedAt, isDeleted, deletedAt, phone, owner, ...fields } = d;
      expect([typeof createdAt, typeof updatedAt, isDeleted, deletedAt, phone, owner]).toEqual(['string', 'string', false, null, '+33 6 — Zoë', alice]);
      expect(ids).toContain(_id);
      return fields;
    })).toEqual(VALUES.filter((_, i) => i !== 1));
    const one = await env.app.inject({ method: 'GET', url: `/api/data/notes/${ids[6]}`, headers: p.sk });
    expect(one.json().data).toMatchObject({ _id: ids[6], isDeleted: false, deletedAt: null });
  });
});

describe('isoFromMs', () => {
  it('writes every instant as Date.prototype.toISOString does, year 0 to 9999 and the extended years past them', () => {
    const edges = [0, -1, 1, 999, 1000, 86_399_999, 86_400_000, 951_782_400_000, 253_402_300_799_999, 253_402_300_800_000, -62_167_219_200_000, -62_167_219_200_001, 8.64e15, -8.64e15];
    for (const ms of edges) expect(isoFromMs(ms)).toBe(new Date(ms).toISOString());
    let seed = 42;
    const next = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    for (let i = 0; i < 20_000; i++) {
      const ms = Math.floor((next() * 2 - 0.5) * 4e12);
      expect(isoFromMs(ms)).toBe(new Date(ms).toISOString());
    }
  });

  it('refuses an invalid instant as toISOString does', () => {
    expect(() => isoFromMs(Number.NaN)).toThrow(RangeError);
    expect(() => isoFromMs(8.64e15 + 1)).toThrow(RangeError);
  });
});
