/**
 * Backups carry functions and their secrets (issue 47 item 4): every version of each function
 * (source, bundle, hash, language), which one is active (after a rollback, an older one), its
 * kind, trigger and enabled flag, and the function secrets as stored, encrypted with
 * ENCRYPTION_KEY; never the invocation log. A copy answers at /api/functions/:name with the
 * secret's value and runs its before-hooks on the imported collection; a restore over the
 * project drops every node's cached copy; a secret of another key and malformed records are
 * refused.
 */
import { randomBytes } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encrypt } from '../../../src/lib/crypto.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { createCollection } from '../data/helpers.js';
import { exportOf, importInto } from './helpers.js';

let env: TestEnv;
let src: TestProject;
let archive: Buffer;

const SECRET = 'tok_ünï_7f3a9c1e5b2d8f40';

type Rec = Record<string, unknown> & { type: string };
const records = (gz: Buffer): Rec[] => gunzipSync(gz).toString('utf8').trim().split('\n').map((l) => JSON.parse(l) as Rec);
const COUNT_OF: Record<string, string> = {
  collection: 'collections', document: 'documents', user: 'users', file: 'files', webhook: 'webhooks',
  function: 'functions', functionVersion: 'functionVersions', functionSecret: 'functionSecrets',
};
/** The records with an end record that counts them (so a test reaches the check it aims at). */
function regzip(recs: Rec[]): Buffer {
  const body = recs.filter((r) => r.type !== 'end');
  const counts: Record<string, number> = { ...(recs.find((r) => r.type === 'end')?.counts as Record<string, number>) };
  for (const k of Object.values(COUNT_OF)) if (k in counts) counts[k] = 0;
  for (const r of body) if (COUNT_OF[r.type]) counts[COUNT_OF[r.type]!] = (counts[COUNT_OF[r.type]!] ?? 0) + 1;
  return gzipSync([...body, { type: 'end', counts }].map((r) => JSON.stringify(r)).join('\n') + '\n');
}

async function inject(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, headers: Record<string, string>, payload?: unknown) {
  const res = await env.app.inject({ method, url, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });
  return { status: res.statusCode, body: res.body ? res.json() : undefined };
}
async function must(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, headers: Record<string, string>, payload?: unknown) {
  const r = await inject(method, url, headers, payload);
  if (r.status >= 300) throw new Error(`${method} ${url}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** A function as its owner sees it, with every version's source, minus what differs in a copy. */
async function functionOf(p: TestProject, name: string) {
  const f = (await must('GET', `/api/projects/${p.id}/functions/${name}`, p.owner.auth)).data;
  const versions = [];
  for (const h of f.history as Array<{ version: number }>) versions.push((await must('GET', `/api/projects/${p.id}/functions/${name}/versions/${h.version}`, p.owner.auth)).data);
  const strip = (x: Record<string, unknown>) => Object.fromEntries(Object.entries(x).filter(([k]) => !['id', '_id'].includes(k)));
  return { ...strip(f), versions: versions.map(strip) };
}

beforeAll(async () => {
  env = await createTestEnv({ RATE_LIMIT_SCALE: '100' });
  src = await makeProject(env.ctx);
  await createCollection(env, src, 'Posts', [{ key: 'title', type: 'String', required: true }, { key: 'slug', type: 'String' }]);
  await must('PUT', `/api/projects/${src.id}/function-secrets/API_TOKEN`, src.owner.auth, { value: SECRET });
  await must('POST', `/api/projects/${src.id}/functions`, src.owner.auth, {
    name: 'hello', kind: 'http', language: 'ts',
    source: `export default (req: unknown, plinth: { env: Record<string, string> }) => ({ v: 1, token: plinth.env.API_TOKEN });`,
  });
  await must('PATCH', `/api/projects/${src.id}/functions/hello`, src.owner.auth, { source: `export default () => ({ v: 2 })`, language: 'js' });
  await must('POST', `/api/projects/${src.id}/functions/hello/rollback`, src.owner.auth, { version: 1 });
  await must('POST', `/api/projects/${src.id}/functions`, src.owner.auth, {
    name: 'slugify', kind: 'before', trigger: { collection: 'Posts', events: ['create'] },
    source: `export default (event) => ({ data: { ...event.data, slug: event.data.title.toLowerCase().replace(/[^a-z0-9]+/g, '-') } })`,
  });
  // An invocation, so the log has something the archive must leave out.
  expect((await inject('GET', '/api/functions/hello', src.pk)).body).toEqual({ v: 1, token: SECRET });
  await env.ctx.functions.log.flush();
  archive = await exportOf(env, src);
});
afterAll(() => env.close());

describe('the archive (version 3)', () => {
  it('holds each function followed by all its versions, and the secrets, counted at the end', () => {
    const recs = records(archive);
    expect(recs[0]).toMatchObject({ type: 'header', version: 3 });
    const fns = recs.filter((r) => r.type === 'function');
    expect(fns).toMatchObject([
      { name: 'hello', kind: 'http', trigger: {}, enabled: true, activeVersion: 1 },
      { name: 'slugify', kind: 'before', trigger: { collection: 'posts', events: ['create'] }, enabled: true, activeVersion: 1 },
    ]);
    const versions = recs.filter((r) => r.type === 'functionVersion');
    expect(versions.map((v) => [v.function, v.version, v.language])).toEqual([['hello', 1, 'ts'], ['hello', 2, 'js'], ['slugify', 1, 'js']]);
    expect(versions[0]).toMatchObject({ source: expect.stringContaining('plinth.env.API_TOKEN'), compiled: expect.stringMatching(/^var __plinthUnit = /), hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    // Each version right after its function.
    const order = recs.map((r) => (r.type === 'function' ? `f:${String(r.name)}` : r.type === 'functionVersion' ? `v:${String(r.function)}` : null)).filter(Boolean);
    expect(order).toEqual(['f:hello', 'v:hello', 'v:hello', 'f:slugify', 'v:slugify']);
    expect(recs.filter((r) => r.type === 'functionSecret')).toEqual([{ type: 'functionSecret', name: 'API_TOKEN', value: { encrypted: expect.any(String), iv: expect.any(String), tag: expect.any(String) }, updatedAt: expect.any(String) }]);
    expect(recs.at(-1)!.counts).toMatchObject({ functions: 2, functionVersions: 3, functionSecrets: 1 });
  });

  it('never holds a secret in clear text, nor the invocation log', async () => {
    const text = gunzipSync(archive).toString('utf8');
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(Buffer.from(SECRET).toString('base64'));
    expect(text).not.toContain(Buffer.from(SECRET).toString('hex'));
    const logged = await env.ctx.db.admin.selectFrom('function_invocations').select('id').where('project_id', '=', src.id).execute();
    expect(logged.length).toBeGreaterThan(0);
    expect(records(archive).some((r) => /invocation/i.test(r.type))).toBe(false);
  });
});

describe('import', () => {
  it('a copy with new ids answers at /api/functions/:name with the secret, with the same versions and active version, and runs its before-hook', async () => {
    const copy = await makeProject(env.ctx);
    const r = await importInto(env, copy, archive, '?newIds=true');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data).toMatchObject({ conflicts: [], counts: { collections: 1, functions: 2, functionVersions: 3, functionSecrets: 1 } });

    expect((await inject('GET', '/api/functions/hello', copy.pk)).body).toEqual({ v: 1, token: SECRET });
    for (const name of ['hello', 'slugify']) expect(await functionOf(copy, name)).toEqual(await functionOf(src, name));
    expect((await functionOf(copy, 'hello')).versions).toHaveLength(2);

    // New ids, names kept.
    const idsOf = async (p: TestProject) => (await env.ctx.db.admin.selectFrom('functions').select(['id', 'name']).where('project_id', '=', p.id).orderBy('name').execute());
    const [before, after] = [await idsOf(src), await idsOf(copy)];
    expect(after.map((f) => f.name)).toEqual(before.map((f) => f.name));
    for (const [i, f] of after.entries()) expect(f.id).not.toBe(before[i]!.id);

    // The hook names its collection by name: it runs on the imported one.
    const created = await inject('POST', '/api/data/posts', copy.sk, { title: 'Hello Backup World' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ slug: 'hello-backup-world' });
    // And the secret stays secret: listed by name only.
    const list = await env.app.inject({ method: 'GET', url: `/api/projects/${copy.id}/function-secrets`, headers: copy.owner.auth });
    expect(list.body).toContain('API_TOKEN');
    expect(list.body).not.toContain(SECRET);
  });

  it('a plain import on the same server: the function ids are taken while the source exists (dry run: nothing written)', async () => {
    const target = await makeProject(env.ctx);
    const r = await importInto(env, target, archive, '?dryRun=true');
    expect(r.status).toBe(200);
    expect(r.body.data.conflicts.join('\n')).toMatch(/Function hello: its id [0-9a-f]{24} is taken on this server/);
    expect(await env.ctx.db.admin.selectFrom('functions').select('id').where('project_id', '=', target.id).execute()).toEqual([]);
  });

  it('refuses a project that already has functions, and restores over its own with replace=true (every node drops its cached copy)', async () => {
    const p = await makeProject(env.ctx);
    expect((await importInto(env, p, archive, '?newIds=true')).status).toBe(200);
    expect((await importInto(env, p, archive, '?newIds=true')).body).toMatchObject({ code: 'import_conflicts', conflicts: [expect.stringMatching(/not empty .*2 functions, 1 function secrets/)] });
    const backup = await exportOf(env, p);
    // Changed since the backup, and the registry's entry warm.
    await must('PATCH', `/api/projects/${p.id}/functions/hello`, p.owner.auth, { source: `export default () => ({ v: 3 })` });
    await must('DELETE', `/api/projects/${p.id}/function-secrets/API_TOKEN`, p.owner.auth);
    await must('POST', `/api/projects/${p.id}/functions`, p.owner.auth, { name: 'later', kind: 'http', source: `export default () => 'later'` });
    expect((await inject('GET', '/api/functions/hello', p.pk)).body).toEqual({ v: 3 });
    const r = await importInto(env, p, backup, '?replace=true');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect((await inject('GET', '/api/functions/hello', p.pk)).body).toEqual({ v: 1, token: SECRET });
    expect((await inject('GET', '/api/functions/later', p.pk)).status).toBe(404);
    expect((await functionOf(p, 'hello')).versions.map((v) => v.version)).toEqual([2, 1]);
  });

  it('a secret encrypted with another ENCRYPTION_KEY is a conflict naming it, and nothing is written', async () => {
    const foreign = records(archive).map((r) => (r.type === 'functionSecret' ? { ...r, value: encrypt(randomBytes(32), SECRET) } : r));
    const target = await makeProject(env.ctx);
    const r = await importInto(env, target, regzip(foreign), '?newIds=true');
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({ code: 'import_conflicts', conflicts: [expect.stringMatching(/Function secret API_TOKEN: .*another ENCRYPTION_KEY/)] });
    expect(await env.ctx.db.admin.selectFrom('functions').select('id').where('project_id', '=', target.id).execute()).toEqual([]);
  });

  it('a version 2 archive (before functions) still imports', async () => {
    const old = records(archive)
      .filter((r) => !r.type.startsWith('function'))
      .map((r) => {
        if (r.type === 'header') return { ...r, version: 2 };
        if (r.type !== 'end') return r;
        const { functions: _f, functionVersions: _v, functionSecrets: _s, ...counts } = r.counts as Record<string, number>;
        return { ...r, counts };
      });
    const target = await makeProject(env.ctx);
    const r = await importInto(env, target, gzipSync(old.map((x) => JSON.stringify(x)).join('\n') + '\n'), '?newIds=true');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data.counts).toMatchObject({ collections: 1, functions: 0, functionSecrets: 0 });
  });

  const edit = (type: string, n: number, change: (r: Rec) => Rec | null) => () => {
    let seen = 0;
    return regzip(records(archive).flatMap((r) => (r.type === type && seen++ === n ? [change(r)].filter((x): x is Rec => x !== null) : [r])));
  };
  const fn = (change: Partial<Rec>) => edit('function', 0, (r) => ({ ...r, ...change }));
  const ver = (change: Partial<Rec>) => edit('functionVersion', 0, (r) => ({ ...r, ...change }));
  it.each([
    ['a function without an id', fn({ id: undefined }), /a function needs an ObjectId id/],
    ['a function name the API refuses', fn({ name: '../Hello' }), /a function needs .* a name/],
    ['an unknown kind', fn({ kind: 'cron' }), /a kind \(http, before/],
    ['a trigger that is not an object', fn({ trigger: 'posts' }), /trigger \(an object\)/],
    ['enabled that is not a boolean', fn({ enabled: 'yes' }), /enabled and activeVersion/],
    ['an active version of 0', fn({ activeVersion: 0 }), /activeVersion \(a positive integer\)/],
    ['a bad time', fn({ updatedAt: 'yesterday' }), /createdAt and updatedAt/],
    ['a hook with a bad trigger', edit('function', 1, (r) => ({ ...r, trigger: { collection: 'posts', events: ['truncate'] } })), /function slugify\): trigger.events/],
    ['a hook on users', edit('function', 1, (r) => ({ ...r, trigger: { collection: 'Users', events: ['create'] } })), /hooks on users/],
    ['a bad cron', fn({ kind: 'schedule', trigger: { cron: '61 * * * *' } }), /function hello\): trigger.cron/],
    ['a second function of a name', edit('function', 1, (r) => ({ ...r, name: 'hello' })), /a second function of this name/],
    ['an active version the archive lacks', fn({ activeVersion: 7 }), /active version 7 is not among its versions in the archive \(1, 2\)/],
    ['a version of an undeclared function', ver({ function: 'ghost' }), /function 'ghost', which the archive does not declare/],
    ['a version number that is not an integer', ver({ version: 1.5 }), /version \(a positive integer\)/],
    ['a repeated version', edit('functionVersion', 1, (r) => ({ ...r, version: 1 })), /a second version 1 of function 'hello'/],
    ['an unknown language', ver({ language: 'py' }), /language \(js or ts\)/],
    ['a source that is not text', ver({ source: 42 }), /needs its source/],
    ['a source over the limit', ver({ source: 'x'.repeat(256 * 1024 + 1) }), /at most 262144 bytes/],
    ['a compiled that is not a bundle', ver({ compiled: 'globalThis.x = 1' }), /esbuild's bundle/],
    ['a hash that is not the code\'s', ver({ hash: 'a'.repeat(64) }), /hash is not the sha256 of its compiled code/],
    ['a hash that is not hex', ver({ hash: 'nothex' }), /hash \(sha256 of compiled, hex\)/],
    ['a secret in clear text', edit('functionSecret', 0, (r) => ({ ...r, value: SECRET })), /an encrypted value/],
    ['a secret name the API refuses', edit('functionSecret', 0, (r) => ({ ...r, name: 'api-token' })), /a function secret needs a name/],
    ['a second secret of a name', () => regzip(records(archive).flatMap((r) => (r.type === 'functionSecret' ? [r, r] : [r]))), /a second function secret API_TOKEN/],
  ])('refuses %s with 400 invalid_archive, and nothing is written', async (_what, make, message) => {
    const target = await makeProject(env.ctx);
    const r = await importInto(env, target, make(), '?newIds=true');
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.code).toBe('invalid_archive');
    expect(r.body.message).toMatch(message);
    expect(await env.ctx.db.admin.selectFrom('functions').select('id').where('project_id', '=', target.id).execute()).toEqual([]);
    expect(await env.ctx.db.admin.selectFrom('collections').select('id').where('project_id', '=', target.id).execute()).toEqual([]);
  });
});
