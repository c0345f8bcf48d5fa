/**
 * Atomic batch (`npm run bench -- batch`): 100 creates as one POST /api/data/batch against 100
 * single POST /api/data/:c calls made one after another, through the real API (in-process
 * inject), timed end to end; p50 over 20 rounds each.
 */
import { createCollection } from '../src/modules/collections/service.js';
import { makeProject } from '../test/helpers/fixtures.js';
import { runBench } from './lib/bench-app.js';

const FIELDS = [{ key: 'name', type: 'String' }, { key: 'category', type: 'String' }, { key: 'price', type: 'Number' }];
const doc = (i: number) => ({ name: `item ${i}`, category: `c${i % 10}`, price: i });

runBench('batch', {}, async ({ app, ctx }) => {
  const p = await makeProject(ctx);
  await createCollection(ctx, p.id, 'pro', { name: 'items', fields: FIELDS });
  const headers = { ...p.sk, 'content-type': 'application/json' };
  const time = async (fn: () => Promise<void>) => {
    const start = process.hrtime.bigint();
    await fn();
    return Number(process.hrtime.bigint() - start) / 1e6;
  };
  const batch = async () => {
    const operations = Array.from({ length: 100 }, (_, i) => ({ op: 'create', collection: 'items', data: doc(i) }));
    const res = await app.inject({ method: 'POST', url: '/api/data/batch', headers, payload: { operations } });
    if (res.statusCode !== 200) throw new Error(res.body);
  };
  const singles = async () => {
    for (let i = 0; i < 100; i++) {
      const res = await app.inject({ method: 'POST', url: '/api/data/items', headers, payload: doc(i) });
      if (res.statusCode !== 201) throw new Error(res.body);
    }
  };
  const rounds = { batch: [] as number[], singles: [] as number[] };
  for (let r = 0; r < 22; r++) {
    rounds.batch.push(await time(batch));
    rounds.singles.push(await time(singles));
  }
  const p50 = (xs: number[]) => xs.slice(2).sort((a, b) => a - b)[Math.floor((xs.length - 2) / 2)]!.toFixed(1);
  console.log('| 100 creates | p50 ms |\n|---|--:|');
  console.log(`| one POST /api/data/batch (one transaction) | ${p50(rounds.batch)} |`);
  console.log(`| 100 POST /api/data/items, one after another | ${p50(rounds.singles)} |`);
});
