/**
 * Parse Server 9.10 for bench/peers.ts: installed on first use into bench/peers/parse from its
 * own package-lock.json (`npm ci`; router pinned to 2.2.0: with router 2.3.0, Parse's /batch
 * answers 500), started as its own process on the benchmark's PostgreSQL, seeded through its REST
 * API with the master key, and measured as a logged-in user (X-Parse-Session-Token: session
 * validation, ACL and class-level permission checks), the way an app calls it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { GET_IDS, LIST, OWNERS, SEED_DOCS, VARIANTS, newDoc, pick, randomInt, seedDoc } from './dataset.js';
import { startServer, type Server } from './process.js';
import type { Target } from './target.js';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'parse');
const APP_ID = 'plinth-bench';
const MASTER_KEY = 'plinth-bench-master-key-not-a-secret';
const PASSWORD = 'bench-Passw0rd!';
const READ_CLASS = 'BenchDoc';
const WRITE_CLASS = 'BenchWrite';

/** `npm ci` in bench/peers/parse unless Parse Server is already there. */
export function installParse(): void {
  if (existsSync(path.join(dir, 'node_modules/parse-server/package.json'))) return;
  console.log('installing Parse Server 9.10.0 into bench/peers/parse (npm ci, once)…');
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('npm ci in bench/peers/parse failed');
}

async function call<T>(method: string, url: string, headers: Record<string, string>, body?: unknown): Promise<T> {
  const res = await fetch(url, {
    method,
    headers: { 'x-parse-application-id': APP_ID, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`Parse ${method} ${url}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

export async function startParse(databaseUrl: string, port: number, workDir: string, cpu?: number): Promise<Server> {
  installParse();
  const config = path.join(workDir, 'parse-config.json');
  const serverURL = `http://127.0.0.1:${port}/parse`;
  const logs = path.join(workDir, 'parse-logs');
  writeFileSync(config, JSON.stringify({ appId: APP_ID, masterKey: MASTER_KEY, databaseURI: databaseUrl, serverURL, host: '127.0.0.1', port, mountPath: '/parse', logsFolder: logs }));
  // The variable too: Parse's CLI opens its default ./logs before it reads logsFolder.
  return startServer('parse', [path.join(dir, 'node_modules/parse-server/bin/parse-server'), config], { cwd: dir, port, cpu, env: { PARSE_SERVER_LOGS_FOLDER: logs } });
}

export function parseTarget(server: Server): Target {
  const api = `${server.url}/parse`;
  const master = { 'x-parse-master-key': MASTER_KEY };
  let session: Record<string, string> = {};
  let ids: string[] = [];
  return {
    name: 'Parse Server 9.10',
    url: server.url,
    pid: server.pid,
    async prepare() {
      const user = await call<{ sessionToken: string }>('POST', `${api}/users`, {}, { username: 'bench_user', password: PASSWORD, email: 'bench_user@bench.invalid' });
      session = { 'x-parse-application-id': APP_ID, 'x-parse-session-token': user.sessionToken };
      const fields = { title: { type: 'String' }, n: { type: 'Number' }, tags: { type: 'Array' }, owner: { type: 'String' } };
      // the (owner, createdAt) index serves the list, as the limit server's does
      await call('POST', `${api}/schemas/${READ_CLASS}`, master, { className: READ_CLASS, fields, indexes: { bench_owner_createdAt: { owner: 1, createdAt: 1 } } });
      await call('POST', `${api}/schemas/${WRITE_CLASS}`, master, { className: WRITE_CLASS, fields });
      for (let i = 0; i < SEED_DOCS; i += 50) {
        const requests = Array.from({ length: Math.min(50, SEED_DOCS - i) }, (_, j) => ({ method: 'POST', path: `/parse/classes/${READ_CLASS}`, body: seedDoc(i + j) }));
        const results = await call<Array<{ success?: unknown }>>('POST', `${api}/batch`, master, { requests });
        if (results.some((r) => !r.success)) throw new Error(`Parse batch insert failed: ${JSON.stringify(results.find((r) => !r.success))}`);
      }
      const all = await call<{ results: Array<{ objectId: string }> }>('GET', `${api}/classes/${READ_CLASS}?keys=objectId&order=createdAt&limit=${SEED_DOCS}`, master);
      ids = all.results.map((r) => r.objectId);
      if (ids.length !== SEED_DOCS) throw new Error(`Parse holds ${ids.length} documents, not ${SEED_DOCS}`);
    },
    requests(workload) {
      const make = {
        create: (k: number) => ({ method: 'POST', path: `/parse/classes/${WRITE_CLASS}`, body: JSON.stringify(newDoc(k)) }),
        list: () => {
          const where = JSON.stringify({ owner: pick(OWNERS), n: { $gte: LIST.nMin, $lt: LIST.nMax } });
          return { path: `/parse/classes/${READ_CLASS}?where=${encodeURIComponent(where)}&order=-createdAt&limit=${LIST.limit}` };
        },
        get: () => ({ path: `/parse/classes/${READ_CLASS}/${ids[randomInt(GET_IDS)]}` }),
        update: () => ({ method: 'PUT', path: `/parse/classes/${READ_CLASS}/${pick(ids)}`, body: JSON.stringify({ n: randomInt(1000) }) }),
      }[workload];
      return Array.from({ length: VARIANTS }, (_, k) => ({ ...make(k), headers: session }));
    },
  };
}
