/**
 * Plinth as a target of bench/peers.ts: `node bin/plinth.js start` (what `npm start` runs: the
 * built bundle, the job worker included) as its own process, on the benchmark's database and data
 * dir (so the keys made here are its keys), rate limits off and warn-level logs. The collections declare the four fields and nothing else, as a user who writes the same
 * schema would: which indexes that gives is Plinth's own choice. Reads use the publishable key
 * (a collection without RLS is readable by any key), writes the secret key, as an app's
 * frontend and backend would; seeding is one SQL insert (not measured).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import type { AppContext } from '../../src/context.js';
import { createCollection } from '../../src/modules/collections/service.js';
import { makeProject } from '../../test/helpers/fixtures.js';
import { GET_IDS, LIST, OWNERS, SEED_DOCS, VARIANTS, newDoc, pick, randomInt, seedDoc } from './dataset.js';
import { startServer, type Server } from './process.js';
import type { Target } from './target.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export function startPlinth(databaseUrl: string, dataDir: string, port: number, cpu?: number): Promise<Server> {
  const nodeArgs = process.env.BENCH_PLINTH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  return startServer('plinth', [...nodeArgs, path.join(root, 'bin/plinth.js'), 'start'], {
    cwd: root,
    port,
    cpu,
    env: { DATABASE_URL: databaseUrl, PLINTH_DATA_DIR: dataDir, HOST: '127.0.0.1', RATE_LIMIT_SCALE: '0', LOG_LEVEL: 'warn' },
  });
}

const FIELDS = [
  { key: 'title', type: 'String' },
  { key: 'n', type: 'Number' },
  { key: 'tags', type: 'Array', items: { type: 'String' } },
  { key: 'owner', type: 'String' },
];

export function plinthTarget(ctx: AppContext, server: Server): Target {
  let pk: Record<string, string> = {};
  let sk: Record<string, string> = {};
  const ids = Array.from({ length: SEED_DOCS }, (_, i) => (i + 1).toString(16).padStart(24, '0'));
  return {
    name: 'Plinth',
    url: server.url,
    pid: server.pid,
    async prepare() {
      const p = await makeProject(ctx);
      pk = p.pk;
      sk = p.sk;
      const read = await createCollection(ctx, p.id, 'pro', { name: 'bench_docs', fields: FIELDS });
      await createCollection(ctx, p.id, 'pro', { name: 'bench_writes', fields: FIELDS });
      const docs = JSON.stringify(Array.from({ length: SEED_DOCS }, (_, i) => seedDoc(i)));
      // document i is i seconds younger than document i - 1, as if created one after another
      await sql`
        INSERT INTO documents (project_id, collection_id, id, owner_id, data, size_bytes, created_at, updated_at)
        SELECT ${p.id}, ${read.id}, lpad(to_hex(i::int), 24, '0'), NULL, d, octet_length(d::text),
               now() - (${SEED_DOCS} - i) * interval '1 second', now()
        FROM jsonb_array_elements(${docs}::jsonb) WITH ORDINALITY AS x(d, i)`.execute(ctx.db.admin);
    },
    requests(workload) {
      const make = {
        create: (k: number) => ({ method: 'POST', path: '/api/data/bench_writes', body: JSON.stringify(newDoc(k)), headers: sk }),
        list: () => ({ path: `/api/data/bench_docs?owner=${pick(OWNERS)}&n_gte=${LIST.nMin}&n_lt=${LIST.nMax}&sort=-createdAt&limit=${LIST.limit}`, headers: pk }),
        get: () => ({ path: `/api/data/bench_docs/${ids[randomInt(GET_IDS)]}`, headers: pk }),
        update: () => ({ method: 'PATCH', path: `/api/data/bench_docs/${pick(ids)}`, body: JSON.stringify({ n: randomInt(1000) }), headers: sk }),
      }[workload];
      return Array.from({ length: VARIANTS }, (_, k) => make(k));
    },
  };
}
