/**
 * Issue 32 item 3: an import archive cannot burn a core or hundreds of MB. Crafted gzip bombs
 * (gzip members concatenated: a 64 MB run compresses to ~64 KB, so gigabytes fit in a few MB)
 * end in a clear 4xx with a bounded memory growth; a client that leaves stops the import at
 * once; one import per operator at a time (429 for a second).
 */
import http from 'node:http';
import { constants, createGzip, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeOperator, makeProject, type TestOperator, type TestProject } from '../../helpers/fixtures.js';

let env: TestEnv;
let base: string;
const MB = 1024 * 1024;
const T = '2026-01-01T00:00:00.000Z';
/** This file's server reads at most 64 MB of archive, 2 000 lines. */
const MAX_BYTES = 64 * MB;
const MAX_LINES = 2000;

const line = (r: unknown) => `${JSON.stringify(r)}\n`;
const member = (text: string | Buffer) => gzipSync(text, { level: 1 });
const runs = new Map<string, Buffer>();
/** One gzip member of `n` MB of `ch`, compressed once and repeated by the callers. */
function run(ch: string, n: number): Buffer {
  const key = `${ch}${n}`;
  if (!runs.has(key)) runs.set(key, gzipSync(Buffer.alloc(n * MB, ch), { level: 9 }));
  return runs.get(key)!;
}
const header = line({ type: 'header', format: 'plinth-project-archive', version: 1, project: { id: 'a'.repeat(24), name: 'bomb' }, exportedAt: T });
const collection = line({ type: 'collection', name: 'big', fields: [], rls: { enabled: false, mode: 'public-read', ownerField: 'userId', requireAuthForWrite: true }, indexes: [], createdAt: T });
const docId = (i: number) => (0x6000000000 + i).toString(16).padStart(24, '0');
const end = (counts: Record<string, number>) => line({ type: 'end', counts: { collections: 0, documents: 0, users: 0, files: 0, ...counts } });

/** A valid archive of `n` documents of `mb` MB each: small compressed, large inflated. */
function heavyDocs(n: number, mb: number): Buffer {
  const blob = run('a', mb);
  const parts: Buffer[] = [member(header + collection)];
  for (let i = 0; i < n; i++) {
    parts.push(member(`{"type":"document","collection":"big","id":"${docId(i)}","ownerId":null,"createdAt":"${T}","updatedAt":"${T}","deletedAt":null,"data":{"blob":"`), blob, member('"}}\n'));
  }
  parts.push(member(end({ collections: 1, documents: n })));
  return Buffer.concat(parts);
}

async function importInto(p: TestProject, body: Buffer, query = '') {
  const res = await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/import${query}`, headers: { ...p.owner.auth, 'content-type': 'application/gzip' }, payload: body });
  return { status: res.statusCode, body: res.json() };
}

/** The largest growth of the process's resident memory while `fn` runs, sampled every 2 ms. */
async function peakGrowth<T>(fn: () => Promise<T>): Promise<{ result: T; growthMb: number; ms: number }> {
  const before = process.memoryUsage().rss;
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 2);
  const t0 = Date.now();
  try {
    const result = await fn();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { result, growthMb: (peak - before) / MB, ms: Date.now() - t0 };
  } finally {
    clearInterval(timer);
  }
}

/** Whether an import transaction of any operator holds its lock (queries.ts). */
async function importsRunning(): Promise<number> {
  const rows = await env.ctx.db.admin
    .selectFrom('pg_locks' as never)
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('locktype' as never, '=', 'advisory' as never)
    .where('classid' as never, '=', String(0x504c4e49) as never)
    .where('objsubid' as never, '=', 2 as never)
    .executeTakeFirstOrThrow();
  return Number(rows.n);
}

async function until(cond: () => Promise<boolean>, ms: number): Promise<number> {
  const t0 = Date.now();
  while (!(await cond())) {
    if (Date.now() - t0 > ms) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return Date.now() - t0;
}

/** An import over a real connection, the body written by the caller; resolves with the answer. */
function openImport(p: TestProject, query = '') {
  const req = http.request(`${base}/api/projects/${p.id}/import${query}`, { method: 'POST', headers: { ...p.owner.auth, 'content-type': 'application/gzip' } });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
  answer.catch(() => {});
  return { req, answer };
}

beforeAll(async () => {
  env = await createTestEnv({ RATE_LIMIT_SCALE: '100', IMPORT_MAX_BYTES: String(MAX_BYTES), IMPORT_MAX_LINES: String(MAX_LINES) });
  base = await env.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => env.close());

describe('gzip bombs end in a clear 4xx, with bounded memory and time', () => {
  it('2.5 MB that inflate to 2.5 GB of newlines: 400 invalid_archive at the first empty line', async () => {
    const bomb = Buffer.concat([member(header), ...Array.from({ length: 40 }, () => run('\n', 64))]);
    expect(bomb.length).toBeLessThan(4 * MB);
    const p = await makeProject(env.ctx);
    const { result, growthMb, ms } = await peakGrowth(() => importInto(p, bomb));
    expect(result.status).toBe(400);
    expect(result.body).toMatchObject({ success: false, code: 'invalid_archive' });
    expect(result.body.message).toMatch(/Line 2: an empty line/);
    console.log(`newline bomb: ${ms} ms, peak RSS growth ${growthMb.toFixed(1)} MB`);
    expect(growthMb).toBeLessThan(64);
    expect(ms).toBeLessThan(5000);
  });

  it('3 MB that inflate to one 3 GB line: 400 invalid_archive (line too long), without assembling it', async () => {
    const bomb = Buffer.concat([member(header), member('{"type":"document","data":"'), ...Array.from({ length: 48 }, () => run('a', 64))]);
    expect(bomb.length).toBeLessThan(4 * MB);
    const p = await makeProject(env.ctx);
    for (let i = 0; i < 2; i++) {
      const { result, growthMb, ms } = await peakGrowth(() => importInto(p, bomb));
      expect(result.status).toBe(400);
      expect(result.body).toMatchObject({ success: false, code: 'invalid_archive' });
      expect(result.body.message).toMatch(/Line 2: line longer than/);
      console.log(`giant line bomb: ${ms} ms, peak RSS growth ${growthMb.toFixed(1)} MB`);
      expect(growthMb).toBeLessThan(64);
      expect(ms).toBeLessThan(5000);
    }
  });

  it('more lines than IMPORT_MAX_LINES: 413 archive_too_many_lines', async () => {
    const docs = Array.from({ length: MAX_LINES }, (_, i) => line({ type: 'document', collection: 'big', id: docId(i), ownerId: null, data: {}, createdAt: T, updatedAt: T, deletedAt: null }));
    const p = await makeProject(env.ctx);
    const r = await importInto(p, member(header + collection + docs.join('') + end({ collections: 1, documents: MAX_LINES })));
    expect(r.status).toBe(413);
    expect(r.body).toMatchObject({ success: false, code: 'archive_too_many_lines' });
    expect(await env.ctx.db.admin.selectFrom('collections').select('id').where('project_id', '=', p.id).execute()).toEqual([]);
  });

  it('valid documents beyond the free plan: 403 database_limit at the first batch over it, nothing kept', { timeout: 120_000 }, async () => {
    const p = await makeProject(env.ctx); // free plan: 50 MB of documents
    const { result: r, growthMb, ms } = await peakGrowth(() => importInto(p, heavyDocs(60, 1))); // 60 MB of documents, under IMPORT_MAX_BYTES
    console.log(`1 MB documents up to the free plan's limit: ${ms} ms, peak RSS growth ${growthMb.toFixed(1)} MB`);
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ success: false, code: 'database_limit' });
    expect(r.body.message).toMatch(/plan's database limit/);
    expect(growthMb).toBeLessThan(160); // 1 MB documents are parsed, batched and sent: bounded, not the archive's size
    expect(await env.ctx.db.admin.selectFrom('collections').select('id').where('project_id', '=', p.id).execute()).toEqual([]);
  });

  it('an archive that inflates beyond IMPORT_MAX_BYTES: 413 archive_too_large', { timeout: 120_000 }, async () => {
    const p = await makeProject(env.ctx, await makeOperator(env.ctx, { plan: 'pro' }));
    const r = await importInto(p, heavyDocs(70, 1));
    expect(r.status, JSON.stringify(r.body)).toBe(413);
    expect(r.body).toMatchObject({ success: false, code: 'archive_too_large' });
  });
});

describe('an import holds no work beyond its client and its operator', () => {
  let op: TestOperator;
  beforeAll(async () => {
    op = await makeOperator(env.ctx, { plan: 'pro' });
  });

  it('the client leaves mid-import: the import stops at once (no CPU after, lock released, nothing kept)', async () => {
    const p = await makeProject(env.ctx, op);
    const { req } = openImport(p);
    req.end(heavyDocs(60, 1)); // 60 MB to parse and insert: seconds of work once received
    await until(async () => (await importsRunning()) > 0, 5000);
    await new Promise((r) => setTimeout(r, 300));
    req.destroy();
    const stoppedMs = await until(async () => (await importsRunning()) === 0, 3000);
    const cpu0 = process.cpuUsage();
    await new Promise((r) => setTimeout(r, 1000));
    const cpu = process.cpuUsage(cpu0);
    console.log(`client left: import stopped after ${stoppedMs} ms, ${(cpu.user + cpu.system) / 1000} ms of CPU in the next second`);
    expect(stoppedMs).toBeLessThan(2000);
    expect((cpu.user + cpu.system) / 1000).toBeLessThan(300); // ms of CPU in the second after
    expect(await env.ctx.db.admin.selectFrom('collections').select('id').where('project_id', '=', p.id).execute()).toEqual([]);
  });

  it('a second import by the same operator while one runs: 429 import_in_progress; another operator is not held up', async () => {
    const p1 = await makeProject(env.ctx, op);
    const p2 = await makeProject(env.ctx, op);
    const { req, answer } = openImport(p1);
    const gz = createGzip();
    gz.pipe(req);
    gz.write(header + collection);
    gz.flush(constants.Z_SYNC_FLUSH);
    await until(async () => (await importsRunning()) > 0, 5000);

    const second = await importInto(p2, member(header + end({})), '?dryRun=true');
    expect(second.status).toBe(429);
    expect(second.body).toMatchObject({ success: false, code: 'import_in_progress' });
    const other = await makeProject(env.ctx);
    const elsewhere = await importInto(other, member(header + end({})), '?dryRun=true');
    expect(elsewhere.status).toBe(200);

    gz.end(end({ collections: 1 }));
    expect((await answer).status).toBe(200);
    const after = await importInto(p2, member(header + end({})), '?dryRun=true');
    expect(after.status).toBe(200);
  });
});
