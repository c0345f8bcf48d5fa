/**
 * Idempotency-Key (`npm run bench -- idempotency`): 100 creates one after another through the
 * real API (in-process inject), without the header, each with its own key, and the same 100
 * keyed requests again (replays); p50 over 20 rounds each (2 warm-up rounds dropped).
 */
import { randomUUID } from 'node:crypto';
import { createCollection } from '../src/modules/collections/service.js';
import { makeProject } from '../test/helpers/fixtures.js';
import { runBench } from './lib/bench-app.js';

const FIELDS = [{ key: 'name', type: 'String' }, { key: 'price', type: 'Number' }];
const doc = (i: number) => ({ name: `item ${i}`, price: i });

runBench('idempotency', {}, async ({ app, ctx }) => {
  const p = await makeProject(ctx);
  await createCollection(ctx, p.id, 'pro', { name: 'items', fields: FIELDS });
  const time = async (fn: () => Promise<void>) => {
    const start = process.hrtime.bigint();
    await fn();
    return Number(process.hrtime.bigint() - start) / 1e6;
  };
  const creates = async (keys: string[] | null) => {
    for (let i = 0; i < 100; i++) {
      const headers = keys ? { ...p.sk, 'idempotency-key': keys[i]! } : p.sk;
      const res = await app.inject({ method: 'POST', url: '/api/data/items', headers, payload: doc(i) });
      if (res.statusCode !== 201) throw new Error(res.body);
    }
  };
  const rounds = { plain: [] as number[], keyed: [] as number[], replay: [] as number[] };
  for (let r = 0; r < 22; r++) {
    const keys = Array.from({ length: 100 }, () => randomUUID());
    rounds.plain.push(await time(() => creates(null)));
    rounds.keyed.push(await time(() => creates(keys)));
    rounds.replay.push(await time(() => creates(keys)));
  }
  const p50 = (xs: number[]) => xs.slice(2).sort((a, b) => a - b)[Math.floor((xs.length - 2) / 2)]!.toFixed(1);
  console.log('| 100 POST /api/data/items, one after another | p50 ms |\n|---|--:|');
  console.log(`| without Idempotency-Key | ${p50(rounds.plain)} |`);
  console.log(`| each with a new key (a transaction: claim, insert, store the answer) | ${p50(rounds.keyed)} |`);
  console.log(`| the same 100 again (replays) | ${p50(rounds.replay)} |`);
});
