/**
 * Idempotency-Key on the data API: a write retried after a lost answer is stored once and
 * answers the first answer again; the same key with another request, another caller or while
 * the first still runs never writes twice nor hands out someone else's answer; a write that
 * rolled back leaves no key; a write without the header never touches the key table.
 */
import { parseCrontab } from 'graphile-worker';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectId } from '../../../src/lib/ids.js';
import { buildTaskList, CRONTAB } from '../../../src/worker/tasks.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, makeUserToken, type TestProject } from '../../helpers/fixtures.js';
import { createCollection } from '../data/helpers.js';

let env: TestEnv;
let p: TestProject;
let asAlice: Record<string, string>;
let asBob: Record<string, string>;

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  asAlice = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, objectId())}` };
  asBob = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, objectId())}` };
  await createCollection(env, p, 'orders', [{ key: 'ref', type: 'String' }, { key: 'total', type: 'Number', required: true }]);
  const owned = [{ key: 'text', type: 'String' }, { key: 'userId', type: 'String' }];
  await createCollection(env, p, 'notes', owned, { enabled: true, mode: 'public-read', ownerField: 'userId' });
});
afterAll(() => env.close());

type Method = 'POST' | 'PUT' | 'PATCH' | 'DELETE';
const call = (method: Method, url: string, headers: Record<string, string>, payload?: unknown, key?: string) =>
  env.app.inject({ method, url, headers: key === undefined ? headers : { ...headers, 'idempotency-key': key }, ...(payload !== undefined ? { payload: payload as object } : {}) });

async function count(collection: string, where: (d: Record<string, unknown>) => boolean = () => true): Promise<number> {
  const col = await env.ctx.collections.get(p.id, collection);
  const all = await env.ctx.db.admin.selectFrom('documents').select(['data', 'collection_id']).where('project_id', '=', p.id).execute();
  return all.filter((r) => r.collection_id === col!.id && where(r.data as Record<string, unknown>)).length;
}
const storedKeys = (key: string) =>
  env.ctx.db.admin.selectFrom('idempotency_keys').selectAll().where('project_id', '=', p.id).where('key', '=', key).execute();

describe('a create retried with the same key', () => {
  it('is stored once and answers the first answer again, byte for byte', async () => {
    const first = await call('POST', '/api/data/orders', p.sk, { ref: 'retry-1', total: 5 }, 'create-1');
    const again = await call('POST', '/api/data/orders', p.sk, { ref: 'retry-1', total: 5 }, 'create-1');
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(201);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(await count('orders', (d) => d.ref === 'retry-1')).toBe(1);
  });

  it('with the keys of the body in another order is the same request', async () => {
    const first = await call('POST', '/api/data/orders', p.sk, { ref: 'retry-2', total: 7 }, 'create-2');
    const again = await call('POST', '/api/data/orders', p.sk, { total: 7, ref: 'retry-2' }, 'create-2');
    expect(again.statusCode).toBe(201);
    expect(again.body).toBe(first.body);
    expect(await count('orders', (d) => d.ref === 'retry-2')).toBe(1);
  });

  it('with another body answers 409 idempotency_key_reused and writes nothing', async () => {
    await call('POST', '/api/data/orders', p.sk, { ref: 'retry-3', total: 1 }, 'create-3');
    const other = await call('POST', '/api/data/orders', p.sk, { ref: 'retry-3b', total: 2 }, 'create-3');
    expect(other.statusCode).toBe(409);
    expect(other.json().code).toBe('idempotency_key_reused');
    expect(await count('orders', (d) => d.ref === 'retry-3b')).toBe(0);
  });

  it('on another route or collection with the same body answers 409', async () => {
    await call('POST', '/api/data/orders', p.sk, { ref: 'retry-4', total: 1 }, 'create-4');
    const elsewhere = await call('POST', '/api/data/notes', p.sk, { ref: 'retry-4', total: 1 }, 'create-4');
    expect(elsewhere.statusCode).toBe(409);
    const bulk = await call('POST', '/api/data/orders/bulk', p.sk, [{ ref: 'retry-4', total: 1 }], 'create-4');
    expect(bulk.statusCode).toBe(409);
    expect(await count('orders', (d) => d.ref === 'retry-4')).toBe(1);
  });
});

describe('a write that rolled back', () => {
  it('does not store the key: its corrected retry with the key is written', async () => {
    const invalid = await call('POST', '/api/data/orders', p.sk, { ref: 'rolled-back' }, 'rollback-1');
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().code).toBe('document_invalid');
    expect(await storedKeys('rollback-1')).toHaveLength(0);
    // The same invalid request again is validated again (not a replay of the 400)...
    expect((await call('POST', '/api/data/orders', p.sk, { ref: 'rolled-back' }, 'rollback-1')).headers['idempotent-replayed']).toBeUndefined();
    // ...and a corrected body with that key is a new write, not a 409.
    const fixed = await call('POST', '/api/data/orders', p.sk, { ref: 'rolled-back', total: 3 }, 'rollback-1');
    expect(fixed.statusCode).toBe(201);
    // The key now belongs to the write that committed.
    const replay = await call('POST', '/api/data/orders', p.sk, { ref: 'rolled-back', total: 3 }, 'rollback-1');
    expect(replay.body).toBe(fixed.body);
    expect(await count('orders', (d) => d.ref === 'rolled-back')).toBe(1);
  });

  it('a batch whose last operation fails stores neither its writes nor its key', async () => {
    const operations = [
      { op: 'create', collection: 'orders', data: { ref: 'batch-rb', total: 1 } },
      { op: 'update', collection: 'orders', id: objectId(), data: { total: 2 } },
    ];
    const res = await call('POST', '/api/data/batch', p.sk, { operations }, 'batch-rb');
    expect(res.statusCode).toBe(404);
    expect(await storedKeys('batch-rb')).toHaveLength(0);
    expect(await count('orders', (d) => d.ref === 'batch-rb')).toBe(0);
  });
});

describe('a project that is full now', () => {
  it('still answers the replay of a create it stored before, and refuses a new one', async () => {
    const big = { ref: 'full', total: 1, note: 'x'.repeat(40_000) };
    const first = await call('POST', '/api/data/orders', p.sk, big, 'full-1');
    expect(first.statusCode).toBe(201);
    const counter = env.ctx.db.admin.updateTable('usage_counters').where('subject_id', '=', p.id).where('metric', '=', 'db_bytes');
    const saved = (await env.ctx.db.admin.selectFrom('usage_counters').select('used').where('subject_id', '=', p.id).where('metric', '=', 'db_bytes').executeTakeFirstOrThrow()).used;
    await counter.set({ used: 50 * 1024 * 1024 - 100 }).execute();
    try {
      const again = await call('POST', '/api/data/orders', p.sk, big, 'full-1');
      expect(again.statusCode).toBe(201);
      expect(again.body).toBe(first.body);
      const fresh = await call('POST', '/api/data/orders', p.sk, { ...big, ref: 'full-2' }, 'full-2');
      expect(fresh.statusCode).toBe(403);
      expect(fresh.json().code).toBe('database_limit');
      expect(await storedKeys('full-2')).toHaveLength(0);
      expect(await count('orders', (d) => d.ref === 'full' || d.ref === 'full-2')).toBe(1);
    } finally {
      await counter.set({ used: saved }).execute();
    }
  });
});

describe('two identical requests at once', () => {
  it('write exactly once and both get the same answer', async () => {
    const body = { ref: 'concurrent', total: 9 };
    const answers = await Promise.all(Array.from({ length: 6 }, () => call('POST', '/api/data/orders', p.sk, body, 'concurrent-1')));
    for (const a of answers) expect(a.statusCode).toBe(201);
    expect(new Set(answers.map((a) => a.body)).size).toBe(1);
    expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(5);
    expect(await count('orders', (d) => d.ref === 'concurrent')).toBe(1);
  });

  it('batches: one runs, the other replays it', async () => {
    const operations = [
      { op: 'create', collection: 'orders', data: { ref: 'batch-c', total: 1 } },
      { op: 'create', collection: 'orders', data: { ref: 'batch-c', total: 2 } },
    ];
    const answers = await Promise.all([0, 1, 2].map(() => call('POST', '/api/data/batch', p.sk, { operations }, 'batch-c')));
    for (const a of answers) expect(a.statusCode).toBe(200);
    expect(new Set(answers.map((a) => a.body)).size).toBe(1);
    expect(await count('orders', (d) => d.ref === 'batch-c')).toBe(2);
  });
});

describe('the other writes', () => {
  it('a batch retried answers its results again and writes once', async () => {
    const operations = [{ op: 'create', collection: 'orders', data: { ref: 'batch-1', total: 1 } }];
    const first = await call('POST', '/api/data/batch', p.sk, { operations }, 'batch-1');
    const again = await call('POST', '/api/data/batch', p.sk, { operations }, 'batch-1');
    expect(first.statusCode).toBe(200);
    expect(again.body).toBe(first.body);
    expect(first.json().data.results[0].op).toBe('create');
    expect(await count('orders', (d) => d.ref === 'batch-1')).toBe(1);
  });

  it('a bulk create retried inserts its documents once', async () => {
    const rows = [{ ref: 'bulk-1', total: 1 }, { ref: 'bulk-1', total: 2 }];
    const first = await call('POST', '/api/data/orders/bulk', p.sk, rows, 'bulk-1');
    const again = await call('POST', '/api/data/orders/bulk', p.sk, rows, 'bulk-1');
    expect(first.statusCode).toBe(201);
    expect(again.body).toBe(first.body);
    expect(await count('orders', (d) => d.ref === 'bulk-1')).toBe(2);
  });

  it('a delete retried answers 200 again instead of 404', async () => {
    const doc = (await call('POST', '/api/data/orders', p.sk, { ref: 'del-1', total: 1 })).json();
    const first = await call('DELETE', `/api/data/orders/${doc._id}`, p.sk, undefined, 'del-1');
    const again = await call('DELETE', `/api/data/orders/${doc._id}`, p.sk, undefined, 'del-1');
    expect(first.statusCode).toBe(200);
    expect(again.statusCode).toBe(200);
    expect(again.body).toBe(first.body);
    // Without the key the retry finds nothing to delete.
    expect((await call('DELETE', `/api/data/orders/${doc._id}`, p.sk)).statusCode).toBe(404);
  });

  it('an update retried answers the first answer (its updatedAt), even after another change', async () => {
    const doc = (await call('POST', '/api/data/orders', p.sk, { ref: 'upd-1', total: 1 })).json();
    const first = await call('PATCH', `/api/data/orders/${doc._id}`, p.sk, { total: 2 }, 'upd-1');
    await call('PATCH', `/api/data/orders/${doc._id}`, p.sk, { total: 3 });
    const again = await call('PATCH', `/api/data/orders/${doc._id}`, p.sk, { total: 2 }, 'upd-1');
    expect(again.body).toBe(first.body);
    const stored = (await call('POST', '/api/data/batch', p.sk, { operations: [{ op: 'restore', collection: 'orders', id: doc._id }] })).json();
    expect(stored.data.results[0].data.total).toBe(3);
  });
});

describe('from a browser', () => {
  it('the preflight allows the header and a replay exposes Idempotent-Replayed', async () => {
    const origin = 'https://app.example.org';
    const pre = await env.app.inject({
      method: 'OPTIONS', url: '/api/data/notes',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key, authorization, content-type, idempotency-key' },
    });
    expect(pre.statusCode).toBe(204);
    expect(String(pre.headers['access-control-allow-headers'])).toContain('idempotency-key');
    await call('POST', '/api/data/notes', { ...asAlice, origin }, { text: 'from the browser' }, 'browser-1');
    const again = await call('POST', '/api/data/notes', { ...asAlice, origin }, { text: 'from the browser' }, 'browser-1');
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(String(again.headers['access-control-expose-headers'])).toContain('Idempotent-Replayed');
  });
});

describe('keys and callers', () => {
  it("another user's replay of the same key and body does not get the first user's answer", async () => {
    const first = await call('POST', '/api/data/notes', asAlice, { text: 'secret of alice' }, 'note-1');
    expect(first.statusCode).toBe(201);
    const bob = await call('POST', '/api/data/notes', asBob, { text: 'secret of alice' }, 'note-1');
    expect(bob.statusCode).toBe(409);
    expect(bob.json().code).toBe('idempotency_key_reused');
    expect(bob.body).not.toContain(first.json()._id);
    expect(bob.body).not.toContain('secret of alice');
    // Nor the secret key's.
    expect((await call('POST', '/api/data/notes', p.sk, { text: 'secret of alice' }, 'note-1')).statusCode).toBe(409);
  });

  it('the same key in another project is another key', async () => {
    const other = await makeProject(env.ctx);
    await createCollection(env, other, 'orders', [{ key: 'ref', type: 'String' }, { key: 'total', type: 'Number' }]);
    const mine = await call('POST', '/api/data/orders', p.sk, { ref: 'shared-key', total: 1 }, 'shared-key');
    const theirs = await call('POST', '/api/data/orders', other.sk, { ref: 'shared-key', total: 1 }, 'shared-key');
    expect(theirs.statusCode).toBe(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.json()._id).not.toBe(mine.json()._id);
  });

  it("another project's scope sees none of this project's keys and cannot write one (row-level security)", async () => {
    await call('POST', '/api/data/orders', p.sk, { ref: 'rls', total: 1 }, 'rls-1');
    const other = await makeProject(env.ctx);
    const scope = { projectId: other.id, keyKind: 'secret' as const };
    const seen = await env.ctx.db.read(scope, (db) => db.selectFrom('idempotency_keys').select('key').execute());
    expect(seen).toHaveLength(0);
    const planted = env.ctx.db.read(scope, (db) =>
      db.insertInto('idempotency_keys').values({ project_id: p.id, key: 'planted', fingerprint: 'x', status: 200, response: '{}', created_at: new Date() }).execute(),
    );
    await expect(planted).rejects.toThrow(/row-level security/);
    const mine = await env.ctx.db.read({ projectId: p.id, keyKind: 'secret' }, (db) => db.selectFrom('idempotency_keys').select('key').where('key', '=', 'rls-1').execute());
    expect(mine).toHaveLength(1);
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['not ASCII', 'clé'],
    ['a control character', 'a\tb'],
  ])('400 idempotency_key_invalid for a key that is %s, nothing written', async (_n, key) => {
    const res = await call('POST', '/api/data/orders', p.sk, { ref: 'bad-key', total: 1 }, key);
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('idempotency_key_invalid');
    expect(await count('orders', (d) => d.ref === 'bad-key')).toBe(0);
  });

  it('accepts 255 printable characters', async () => {
    const res = await call('POST', '/api/data/orders', p.sk, { ref: 'long-key', total: 1 }, '~'.repeat(200) + ' !"#$%&\'()*+,-./0123456789:;<=>?@AZ[\\]^_`az{|}'.slice(0, 55));
    expect(res.statusCode).toBe(201);
  });

  // Moves the fake clock 48 h on: the end users' tokens expire (later tests use the secret key).
  it('expires after 24 h: the key then takes a new request, and the crontab job deletes it', async () => {
    await call('POST', '/api/data/orders', p.sk, { ref: 'expiring', total: 1 }, 'expiring');
    env.clock.advance(24 * 3600 * 1000 + 1000);
    const later = await call('POST', '/api/data/orders', p.sk, { ref: 'expiring-2', total: 1 }, 'expiring');
    expect(later.statusCode).toBe(201);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
    env.clock.advance(24 * 3600 * 1000 + 1000);
    expect(parseCrontab(CRONTAB).map((i) => i.task)).toContain('idempotency:delete_expired');
    await buildTaskList(env.ctx)['idempotency:delete_expired']!({}, {} as never);
    expect(await storedKeys('expiring')).toHaveLength(0);
    expect(await storedKeys('create-1')).toHaveLength(0);
  });

  it('the clean-up keeps keys younger than 24 h', async () => {
    await call('POST', '/api/data/orders', p.sk, { ref: 'young', total: 1 }, 'young');
    env.clock.advance(23 * 3600 * 1000);
    await buildTaskList(env.ctx)['idempotency:delete_expired']!({}, {} as never);
    expect(await storedKeys('young')).toHaveLength(1);
    const again = await call('POST', '/api/data/orders', p.sk, { ref: 'young', total: 1 }, 'young');
    expect(again.headers['idempotent-replayed']).toBe('true');
  });
});

describe('without the header', () => {
  it('a write never touches the key table (it completes while the table is locked)', async () => {
    const locker = new pg.Client({ connectionString: env.databaseUrl });
    await locker.connect();
    try {
      await locker.query('BEGIN; LOCK TABLE idempotency_keys IN ACCESS EXCLUSIVE MODE');
      const write = Promise.all([
        call('POST', '/api/data/orders', p.sk, { ref: 'no-key', total: 1 }),
        call('POST', '/api/data/batch', p.sk, { operations: [{ op: 'create', collection: 'orders', data: { ref: 'no-key', total: 2 } }] }),
      ]);
      const outcome = await Promise.race([write.then(() => 'done'), new Promise((r) => setTimeout(() => r('blocked'), 3000))]);
      expect(outcome).toBe('done');
      expect((await write).map((r) => r.statusCode)).toEqual([201, 200]);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
  });

  it('the OpenAPI document lists the header on the write routes', async () => {
    const doc = (await env.app.inject({ method: 'GET', url: '/docs/json' })).json() as {
      paths: Record<string, Record<string, { parameters?: Array<{ in: string; name: string }> }>>;
    };
    const has = (path: string, method: string) => (doc.paths[path]?.[method]?.parameters ?? []).some((x) => x.in === 'header' && x.name === 'idempotency-key');
    expect(has('/api/data/{collectionName}', 'post')).toBe(true);
    expect(has('/api/data/{collectionName}/{id}', 'patch')).toBe(true);
    expect(has('/api/data/{collectionName}/{id}', 'delete')).toBe(true);
    expect(has('/api/data/batch', 'post')).toBe(true);
    expect(has('/api/mail/send', 'post')).toBe(true);
    expect(has('/api/data/{collectionName}', 'get')).toBe(false);
  });
});
