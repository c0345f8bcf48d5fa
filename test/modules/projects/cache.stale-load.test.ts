/**
 * Threat: a key lookup that was in flight when the key was rotated finishes after the
 * eviction and puts the old key back in the cache, where it would keep working for the TTL.
 * The same holds for collection definitions (a stale schema or RLS mode for 30 s).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeCollection, makeProject, type TestProject } from '../../helpers/fixtures.js';

let env: TestEnv;
let project: TestProject;

beforeAll(async () => {
  env = await createTestEnv();
  project = await makeProject(env.ctx);
});
afterAll(async () => {
  await env.close();
});

describe('a load that overlaps an eviction is not cached', () => {
  it('project keys: the old key is looked up again after the rotation', async () => {
    const cache = env.ctx.projects;
    const loading = cache.resolveKey(project.publishableKey);
    cache.evictProject(project.id); // the change notice arrives while the lookup is in flight
    expect((await loading)?.project.id).toBe(project.id);
    await sql`UPDATE projects SET publishable_key_hash = 'rotated' WHERE id = ${project.id}`.execute(env.ctx.db.admin);
    expect(await cache.resolveKey(project.publishableKey)).toBeNull();
  });

  it('collection definitions: the changed definition is read again', async () => {
    await makeCollection(env.ctx, project.id, 'notes');
    const cache = env.ctx.collections;
    const loading = cache.get(project.id, 'notes');
    cache.evictProject(project.id);
    expect((await loading)?.name).toBe('notes');
    await sql`UPDATE collections SET rls = jsonb_set(rls, '{enabled}', 'true') WHERE project_id = ${project.id}`.execute(env.ctx.db.admin);
    expect((await cache.get(project.id, 'notes'))?.rls.enabled).toBe(true);
  });

  it('a load with no eviction in between is cached (the cache still works)', async () => {
    const other = await makeProject(env.ctx);
    expect((await env.ctx.projects.resolveKey(other.secretKey))?.project.id).toBe(other.id);
    await sql`UPDATE projects SET secret_key_hash = 'changed-behind-the-cache' WHERE id = ${other.id}`.execute(env.ctx.db.admin);
    expect((await env.ctx.projects.resolveKey(other.secretKey))?.project.id).toBe(other.id);
  });
});
