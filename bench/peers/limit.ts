/** The limit server (bench/peers/limit-server.ts) as a target of bench/peers.ts. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { GET_IDS, LIST, OWNERS, SEED_DOCS, VARIANTS, newDoc, pick, randomInt, seedDoc } from './dataset.js';
import { startServer, type Server } from './process.js';
import type { Target } from './target.js';

const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'limit-server.ts');

export function startLimit(databaseUrl: string, port: number, cpu?: number): Promise<Server> {
  return startServer('limit', ['--import', 'tsx', script], { port, cpu, env: { PG_URL: databaseUrl } });
}

export function limitTarget(server: Server): Target {
  let ids: string[] = [];
  return {
    name: 'limit (Fastify + pg)',
    url: server.url,
    pid: server.pid,
    async prepare() {
      const docs = Array.from({ length: SEED_DOCS }, (_, i) => seedDoc(i));
      const res = await fetch(`${server.url}/seed`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ docs }) });
      if (res.status !== 201) throw new Error(`limit server seed: ${res.status} ${await res.text()}`);
      ids = ((await res.json()) as { ids: string[] }).ids;
    },
    requests(workload) {
      const make = {
        create: (k: number) => ({ method: 'POST', path: '/items', body: JSON.stringify(newDoc(k)) }),
        list: () => ({ path: `/docs?owner=${pick(OWNERS)}&nMin=${LIST.nMin}&nMax=${LIST.nMax}&limit=${LIST.limit}` }),
        get: () => ({ path: `/docs/${ids[randomInt(GET_IDS)]}` }),
        update: () => ({ method: 'PATCH', path: `/docs/${pick(ids)}`, body: JSON.stringify({ n: randomInt(1000) }) }),
      }[workload];
      return Array.from({ length: VARIANTS }, (_, k) => make(k));
    },
  };
}
