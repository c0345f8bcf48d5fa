/**
 * A backup is streamed (docs/backup.md "Scheduled backups"): the export page by page, the seal one
 * 64 KiB frame at a time, the store a temp file. Measured here on a project of 20 000 documents of
 * ~1 KB of incompressible text each: the heap's growth while the backup runs (sampled every 5 ms, and after a forced collection every 250 ms for what is live,
 * from a collected baseline) stays well under the size of the archive it writes.
 */
import { randomBytes } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestBackup, runBackup } from '../../../src/modules/backup/run-service.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeOperator } from '../../helpers/fixtures.js';
import { apiProject, must } from './helpers.js';

let env: TestEnv;
/** The heap samplers: stopped with the file even when the test timed out while the backup ran on. */
const samplers: Array<ReturnType<typeof setInterval>> = [];
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(() => {
  // A forced collection every 250 ms left running after a timeout would starve whatever else this
  // worker process still runs (with `isolate: false`, the next test files: tried, reverted because a
  // forced collection of a heap holding earlier files' modules made this test itself time out).
  samplers.forEach((t) => clearInterval(t));
  return env.close();
});

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const DOCS = 20_000;

describe('backup memory', () => {
  it(`a backup of ${DOCS} documents grows the heap by well under the archive's size`, async () => {
    const owner = await makeOperator(env.ctx, { plan: 'pro' });
    const p = await apiProject(env, owner, 'Large');
    await must(env, 'POST', `/api/projects/${p.id}/collections`, owner.auth, { name: 'blobs', schema: [{ key: 'i', type: 'Number' }, { key: 'text', type: 'String' }] });
    for (let i = 0; i < DOCS; i += 100) {
      const batch = Array.from({ length: 100 }, (_, j) => ({ i: i + j, text: randomBytes(500).toString('hex') }));
      await must(env, 'POST', '/api/data/blobs/bulk', p.sk, batch);
    }
    const { backupId } = await requestBackup(env.ctx, p.id);
    gc();
    const base = process.memoryUsage().heapUsed;
    let peak = base;
    let peakLive = base;
    // the heap as it is (garbage included), and what is live (collected first), through the run
    const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 5);
    const liveTimer = setInterval(() => {
      gc();
      peakLive = Math.max(peakLive, process.memoryUsage().heapUsed);
    }, 250);
    samplers.push(timer, liveTimer);
    const started = Date.now();
    await runBackup(env.ctx, backupId);
    const ms = Date.now() - started;
    clearInterval(timer);
    clearInterval(liveTimer);
    peak = Math.max(peak, process.memoryUsage().heapUsed);
    const [b] = (await must(env, 'GET', `/api/projects/${p.id}/backups`, owner.auth)).data;
    expect(b).toMatchObject({ id: backupId, status: 'succeeded', counts: { documents: DOCS } });
    const growth = peak - base;
    const live = peakLive - base;
    const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
    console.log(`backup of ${DOCS} documents: stored ${mb(b.size)} in ${ms} ms; heap growth at peak ${mb(growth)} with garbage, ${mb(live)} live (${((live / b.size) * 100).toFixed(0)} % of the stored archive)`);
    expect(b.size).toBeGreaterThan(10 * 1024 * 1024);
    expect(live).toBeLessThan(b.size / 4);
  }, 180_000);
});
