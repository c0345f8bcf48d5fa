/**
 * Threat: a dashboard route a member's role should not reach (a viewer rotating the secret key
 * because a new route forgot its check). Every route of the dashboard, and every route of the
 * operator groups wherever it is served, carries a permission declaration
 * (src/modules/members/permissions.ts): the least role a member needs, or `noProject` with the
 * reason. A project route (`:projectId`) must declare a role; a new route without a
 * declaration fails here, and so does a declaration that names no route.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeTableOf } from '../../src/plugins/route-table.js';
import { PERMISSIONS } from '../../src/modules/members/permissions.js';
import { isProjectPermission } from '../../src/modules/members/declare.js';
import { createTestEnv, type TestEnv } from '../helpers/context.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(() => env.close());

const OPERATOR_GROUPS = new Set(['operator', 'verifiedOperator', 'admin']);

function routes() {
  return [...routeTableOf(env.app).values()].flatMap((e) => [...e.methods].map(([method, route]) => ({ method, url: e.url, route })));
}

const dashboardRoutes = () =>
  routes().filter((r) => r.method !== 'OPTIONS' && r.url.startsWith('/api') && (r.route.config?.surface === 'dashboard' || OPERATOR_GROUPS.has(String(r.route.config?.auth))));

describe('permission declarations', () => {
  it('every dashboard route, and every route of the operator groups, declares who may call it', () => {
    const all = dashboardRoutes();
    expect(all.length).toBeGreaterThan(150);
    expect(all.filter((r) => r.route.config?.permission === undefined).map((r) => `${r.method} ${r.url}`)).toEqual([]);
  });

  it("every route of a project declares the least role it needs, and only a project's routes do", () => {
    const all = dashboardRoutes();
    const projectRoutes = all.filter((r) => r.url.includes('/:projectId'));
    expect(projectRoutes.length).toBeGreaterThan(120);
    expect(projectRoutes.filter((r) => !isProjectPermission(r.route.config?.permission)).map((r) => `${r.method} ${r.url}`)).toEqual([]);
    expect(all.filter((r) => !r.url.includes('/:projectId') && isProjectPermission(r.route.config?.permission)).map((r) => `${r.method} ${r.url}`)).toEqual([]);
  });

  it('a route without a project says why it needs no role', () => {
    const vague = dashboardRoutes()
      .map((r) => ({ at: `${r.method} ${r.url}`, d: r.route.config?.permission }))
      .filter(({ d }) => d && !isProjectPermission(d) && !(d.none.trim().length > 10))
      .map((r) => r.at);
    expect(vague).toEqual([]);
  });

  it('a project route is served in an operator group, where the role guard runs', () => {
    const outside = routes()
      .filter((r) => isProjectPermission(r.route.config?.permission) && !OPERATOR_GROUPS.has(String(r.route.config?.auth)))
      .map((r) => `${r.method} ${r.url}`);
    expect(outside).toEqual([]);
  });

  it('every declaration names a registered route', () => {
    const registered = new Set(routes().map((r) => `${r.method} ${r.url}`));
    expect(Object.keys(PERMISSIONS).filter((k) => !registered.has(k))).toEqual([]);
  });
});
