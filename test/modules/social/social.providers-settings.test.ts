/** Dashboard: PATCH /api/projects/:id/auth/providers (docs/wire-compatibility.md §10.6). Secrets are write-only. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeOperator } from '../../helpers/fixtures.js';
import { authProject } from '../auth/helpers.js';

let env: TestEnv;

beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(() => env.close());

const patch = (id: string, auth: Record<string, string>, payload: unknown) =>
  env.app.inject({ method: 'PATCH', url: `/api/projects/${id}/auth/providers`, headers: auth, payload: payload as Record<string, unknown> });

describe('auth providers settings', () => {
  it('stores the client secret encrypted, never returns it, and enables the provider', async () => {
    const p = await authProject(env);
    const res = await patch(p.id, p.owner.auth, { github: { enabled: true, clientId: 'cid', clientSecret: 'super-secret-value' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.authProviders).toEqual({
      github: { enabled: true, clientId: 'cid', hasClientSecret: true },
      google: { enabled: false, clientId: '', hasClientSecret: false },
    });
    expect(res.body).not.toContain('super-secret-value');
    const row = await env.ctx.db.admin.selectFrom('projects').select(['settings', 'secrets']).where('id', '=', p.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain('super-secret-value');
    expect(row.secrets.githubClientSecret).toHaveProperty('encrypted');
    expect(env.logs.join('\n')).not.toContain('super-secret-value');
  });

  it('422 when enabling without clientId + secret, or without a site URL', async () => {
    const p = await authProject(env);
    const incomplete = await patch(p.id, p.owner.auth, { google: { enabled: true, clientId: 'x' } });
    expect(incomplete.statusCode).toBe(422);
    expect(incomplete.json().message).toBe('google requires clientId and clientSecret before it can be enabled.');
    await env.ctx.db.admin.updateTable('projects').set({ site_url: null }).where('id', '=', p.id).execute();
    const noSite = await patch(p.id, p.owner.auth, { google: { enabled: true, clientId: 'x', clientSecret: 'y' } });
    expect(noSite.statusCode).toBe(422);
    expect(noSite.json().message).toMatch(/Site URL/);
  });

  it('400 for an empty body or an empty clientSecret; 404 for a project of someone else', async () => {
    const p = await authProject(env);
    expect((await patch(p.id, p.owner.auth, {})).statusCode).toBe(400);
    expect((await patch(p.id, p.owner.auth, { github: { clientSecret: '' } })).statusCode).toBe(400);
    const stranger = await makeOperator(env.ctx);
    expect((await patch(p.id, stranger.auth, { github: { enabled: false } })).statusCode).toBe(404);
  });

  it('400, not 500, for a NUL character in a value', async () => {
    const p = await authProject(env);
    const res = await patch(p.id, p.owner.auth, { github: { clientId: 'a\u0000', clientSecret: 'b' } });
    expect(res.statusCode).toBe(400);
  });

  it('an omitted clientSecret keeps the stored one', async () => {
    const p = await authProject(env);
    await patch(p.id, p.owner.auth, { github: { enabled: true, clientId: 'a', clientSecret: 'b' } });
    const res = await patch(p.id, p.owner.auth, { github: { clientId: 'a2' } });
    expect(res.json().data.authProviders.github).toEqual({ enabled: true, clientId: 'a2', hasClientSecret: true });
  });
});
