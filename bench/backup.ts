/**
 * Scheduled backup benchmark (`npm run bench -- backup`, or `npx tsx bench/backup.ts`): boots
 * its own embedded PostgreSQL + app, fills one project with BENCH_BACKUP_DOCS documents
 * (default 200 000) of ~1 KB each (hex text: about half of it compresses), then times one backup
 * run as the job worker runs it (export snapshot → gzip → AES-256-GCM seal → local storage) and
 * samples the process's RSS and heap every 10 ms. Prints a markdown table (docs/backup.md
 * "Cost").
 */
import { sql } from 'kysely';
import { requestBackup, runBackup } from '../src/modules/backup/run-service.js';
import { listBackups } from '../src/modules/backup/restore-service.js';
import { makeCollection, makeProject, makeOperator } from '../test/helpers/fixtures.js';
import { runBench } from './lib/bench-app.js';

const DOCS = Number(process.env.BENCH_BACKUP_DOCS ?? 200_000);
const MB = 1024 * 1024;
const mb = (n: number) => `${(n / MB).toFixed(0)} MB`;

runBench('backup', {}, async ({ ctx }) => {
  const owner = await makeOperator(ctx, { plan: 'pro' });
  const p = await makeProject(ctx, owner, 'Backup bench');
  const col = await makeCollection(ctx, p.id, 'blobs', [{ key: 'i', type: 'Number' }, { key: 'text', type: 'String' }] as never);
  const t0 = Date.now();
  for (let i = 0; i < DOCS; i += 50_000) {
    await sql`INSERT INTO documents (project_id, collection_id, id, data, size_bytes)
      SELECT ${p.id}, ${col.id}, lpad(to_hex(g), 24, '0'),
             jsonb_build_object('i', g, 'text', (SELECT string_agg(md5(g::text || ':' || k), '') FROM generate_series(1, 31) k)), 1100
        FROM generate_series(${i + 1}::int, ${Math.min(DOCS, i + 50_000)}::int) g`.execute(ctx.db.admin);
  }
  await sql`ANALYZE documents`.execute(ctx.db.admin);
  const size = await sql<{ b: string }>`SELECT pg_total_relation_size(${`documents_${col.id}`}::regclass)::bigint AS b`.execute(ctx.db.admin).then((r) => Number(r.rows[0]!.b)).catch(() => 0);
  console.log(`seeded ${DOCS} documents in ${((Date.now() - t0) / 1000).toFixed(1)} s (table ${mb(size)})`);

  const { backupId } = await requestBackup(ctx, p.id);
  global.gc?.();
  const before = process.memoryUsage();
  let rss = before.rss;
  let heap = before.heapUsed + before.arrayBuffers;
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    rss = Math.max(rss, m.rss);
    heap = Math.max(heap, m.heapUsed + m.arrayBuffers);
  }, 10);
  const started = Date.now();
  await runBackup(ctx, backupId);
  const ms = Date.now() - started;
  clearInterval(timer);
  const [b] = await listBackups(ctx, p.id);
  if (b?.status !== 'succeeded') throw new Error(`backup ${b?.status}: ${JSON.stringify(b?.error)}`);
  console.log('\n| documents | table | stored (sealed gzip) | time | MB/s of table | peak RSS growth | peak heap+buffers growth |');
  console.log('|---|---|---|---|---|---|---|');
  console.log(`| ${DOCS} | ${mb(size)} | ${mb(b.size!)} | ${(ms / 1000).toFixed(1)} s | ${(size / MB / (ms / 1000)).toFixed(0)} | ${mb(rss - before.rss)} (${mb(rss)} total) | ${mb(heap - before.heapUsed - before.arrayBuffers)} |`);
});
