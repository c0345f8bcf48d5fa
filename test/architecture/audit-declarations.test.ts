/**
 * Threat: an operator change that leaves no trace in the project's audit log (docs/audit.md).
 * Every mutating route (POST/PUT/PATCH/DELETE) of the dashboard, and of the operator groups
 * wherever they are served, carries an
 * audit declaration in its config (src/modules/audit/actions.ts, or its own options): an
 * action, or `notAudited` with a reason. A new route without one fails here, and so does a
 * declaration that names no route (a renamed route would otherwise silently lose its audit).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeTableOf } from '../../src/plugins/route-table.js';
import { AUDIT_DECLARATIONS } from '../../src/modules/audit/actions.js';
import { isAudited } from '../../src/modules/audit/declare.js';
import { createTestEnv, type TestEnv } from '../helpers/context.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(() => env.close());

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const OPERATOR_GROUPS = new Set(['operator', 'verifiedOperator', 'admin']);

function routes() {
  return [...routeTableOf(env.app).values()].flatMap((e) => [...e.methods].map(([method, route]) => ({ method, url: e.url, route })));
}

describe('audit declarations', () => {
  it('every mutating dashboard route, and every mutating route of the operator groups, declares its audit action, or why it has none', () => {
    const mutating = routes().filter(
      (r) => MUTATING.has(r.method) && r.url.startsWith('/api') && (r.route.config?.surface === 'dashboard' || OPERATOR_GROUPS.has(String(r.route.config?.auth))),
    );
    expect(mutating.length).toBeGreaterThan(80);
    const missing = mutating.filter((r) => r.route.config?.audit === undefined).map((r) => `${r.method} ${r.url}`);
    expect(missing).toEqual([]);
    const noReason = mutating
      .map((r) => ({ at: `${r.method} ${r.url}`, d: r.route.config?.audit }))
      .filter(({ d }) => d && !isAudited(d) && !(d.none.trim().length > 10))
      .map((r) => r.at);
    expect(noReason).toEqual([]);
  });

  it('an audited route is on the dashboard surface, where the audit hooks run', () => {
    const outside = routes()
      .filter((r) => isAudited(r.route.config?.audit) && r.route.config?.surface !== 'dashboard')
      .map((r) => `${r.method} ${r.url}`);
    expect(outside).toEqual([]);
  });

  it('every declaration names a registered route', () => {
    const registered = new Set(routes().map((r) => `${r.method} ${r.url}`));
    expect(Object.keys(AUDIT_DECLARATIONS).filter((k) => !registered.has(k))).toEqual([]);
  });

  it('action names are stable `<area>.<verb>` names', () => {
    const bad = Object.values(AUDIT_DECLARATIONS).filter(isAudited).map((d) => d.action).filter((a) => !/^[a-z]+\.[a-z_]+$/.test(a));
    expect(bad).toEqual([]);
  });

  it('the audit routes themselves are reads only: no route changes or deletes an entry', () => {
    const auditRoutes = routes().filter((r) => r.url.includes('/audit'));
    expect(auditRoutes.map((r) => r.method).filter((m) => !['GET', 'HEAD', 'OPTIONS'].includes(m))).toEqual([]);
  });
});
