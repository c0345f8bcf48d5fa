/**
 * Expired OAuth states are removed by a crontab job that runs once per schedule for the
 * cluster (not by a coin flip inside sign-in requests): the table cannot grow without bound
 * whatever the sign-in traffic, and live states are never touched.
 */
import { parseCrontab } from 'graphile-worker';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTaskList, CRONTAB } from '../../../src/worker/tasks.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject } from '../../helpers/fixtures.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(() => env.close());

async function insertState(projectId: string, hash: string, expiresAt: Date) {
  await sql`INSERT INTO social_states (state_hash, browser_hash, project_id, provider, code_verifier, expires_at, created_at)
    VALUES (${hash}, ${'b' + hash}, ${projectId}, 'github', '{}'::jsonb, ${expiresAt}, now())`.execute(env.ctx.db.admin);
}

describe('expired OAuth state clean-up', () => {
  it('is a scheduled worker job that deletes expired states and keeps live ones', async () => {
    const items = parseCrontab(CRONTAB);
    expect(items.map((i) => i.task)).toContain('social:delete_expired_states');
    const tasks = buildTaskList(env.ctx);
    for (const item of items) expect(Object.hasOwn(tasks, item.task)).toBe(true);

    const p = await makeProject(env.ctx);
    const now = env.ctx.clock.now().getTime();
    await insertState(p.id, 'expired', new Date(now - 60_000));
    await insertState(p.id, 'live', new Date(now + 600_000));
    await tasks['social:delete_expired_states']!({}, {} as never);
    const left = await sql<{ state_hash: string }>`SELECT state_hash FROM social_states WHERE project_id = ${p.id}`.execute(env.ctx.db.admin);
    expect(left.rows.map((r) => r.state_hash)).toEqual(['live']);
  });
});
