/** Admin (ADMIN_EMAIL): list operators, set plans; plan changes apply to projects at once. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectId } from '../../../src/lib/ids.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeOperator, makeProject, type TestOperator } from '../../helpers/fixtures.js';

let env: TestEnv;
let admin: TestOperator;
let member: TestOperator;

beforeAll(async () => {
  env = await createTestEnv({ ADMIN_EMAIL: 'Boss@Example.com' });
  admin = await makeOperator(env.ctx, { email: 'boss@example.com' });
  member = await makeOperator(env.ctx);
});
afterAll(() => env.close());

const setPlan = (who: TestOperator, id: string, payload: object) =>
  env.app.inject({ method: 'PATCH', url: `/api/admin/operators/${id}/plan`, headers: who.auth, payload });

describe('admin gating', () => {
  it('non-admins get 403, anonymous callers 401', async () => {
    const list = await env.app.inject({ method: 'GET', url: '/api/admin/operators', headers: member.auth });
    expect(list.statusCode).toBe(403);
    expect((await setPlan(member, member.id, { plan: 'pro' })).statusCode).toBe(403);
    expect((await env.app.inject({ method: 'GET', url: '/api/admin/operators' })).statusCode).toBe(401);
  });

  it('the admin sees every operator, flagged, with project counts; /me says isAdmin', async () => {
    await makeProject(env.ctx, member);
    const res = await env.app.inject({ method: 'GET', url: '/api/admin/operators', headers: admin.auth });
    expect(res.statusCode).toBe(200);
    const rows = res.json().data as Array<{ email: string; isAdmin: boolean; projectsCount: number }>;
    expect(rows.find((r) => r.email === 'boss@example.com')?.isAdmin).toBe(true);
    expect(rows.find((r) => r.email === member.email)).toMatchObject({ isAdmin: false, projectsCount: 1 });
    expect(JSON.stringify(rows)).not.toContain('argon2');
    const me = await env.app.inject({ method: 'GET', url: '/api/auth/me', headers: admin.auth });
    expect(me.json().data.user.isAdmin).toBe(true);
  });
});

describe('PATCH /api/admin/operators/:id/plan', () => {
  it('400 for a bad id or plan, 404 for an unknown operator', async () => {
    expect((await setPlan(admin, 'nope', { plan: 'pro' })).statusCode).toBe(400);
    const badPlan = await setPlan(admin, member.id, { plan: 'platinum' });
    expect(badPlan.statusCode).toBe(400);
    expect(badPlan.json().message).toBe("Invalid plan. Must be 'free' or 'pro'.");
    expect((await setPlan(admin, member.id, {})).statusCode).toBe(400);
    expect((await setPlan(admin, objectId(), { plan: 'pro' })).statusCode).toBe(404);
  });

  it('promotion applies at once: cached project records and project limits follow the new plan', async () => {
    const owner = await makeOperator(env.ctx);
    const p = await makeProject(env.ctx, owner);
    for (let i = 0; i < 2; i++) await makeProject(env.ctx, owner);
    expect((await env.ctx.projects.resolveKey(p.secretKey))?.project.planName).toBe('free');
    const blocked = await env.app.inject({ method: 'POST', url: '/api/projects', headers: owner.auth, payload: { name: 'fourth' } });
    expect(blocked.statusCode).toBe(403);

    const res = await setPlan(admin, owner.id, { plan: 'pro' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.user).toMatchObject({ _id: owner.id, plan: 'pro' });
    expect((await env.ctx.projects.resolveKey(p.secretKey))?.project.planName).toBe('pro');
    const allowed = await env.app.inject({ method: 'POST', url: '/api/projects', headers: owner.auth, payload: { name: 'fourth' } });
    expect(allowed.statusCode).toBe(201);

    await setPlan(admin, owner.id, { plan: 'free' });
    expect((await env.ctx.projects.resolveKey(p.secretKey))?.project.plan.projectsPerOperator).toBe(3);
  });
});

describe('plans', () => {
  it('the admin reads the plan table; others get 403', async () => {
    const res = await env.app.inject({ method: 'GET', url: '/api/admin/plans', headers: admin.auth });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.free).toMatchObject({ projectsPerOperator: 3, broadcasts: false });
    expect(res.json().data.pro).toMatchObject({ broadcasts: true });
    expect((await env.app.inject({ method: 'GET', url: '/api/admin/plans', headers: member.auth })).statusCode).toBe(403);
  });
});
