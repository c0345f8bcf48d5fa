/**
 * The console's batch editor route, POST /api/projects/:projectId/data/batch: the public atomic
 * batch as the project's owner. All or nothing (one refused operation writes nothing), and only
 * the owner's session reaches the project (another operator gets 404, no session 401).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeOperator, makeProject, type TestProject } from '../../helpers/fixtures.js';

let env: TestEnv;
let p: TestProject;
let ids: string[];

const call = async (method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: unknown) => {
  const res = await env.app.inject({ method, url, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });
  return { status: res.statusCode, body: res.json() };
};

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  const c = await call('POST', `/api/projects/${p.id}/collections`, p.owner.auth, { name: 'items', schema: [{ key: 'name', type: 'String', required: true }, { key: 'price', type: 'Number' }] });
  expect(c.status, JSON.stringify(c.body)).toBe(201);
  const made = await call('POST', `/api/projects/${p.id}/data/items/bulk`, p.owner.auth, [{ name: 'a', price: 1 }, { name: 'b', price: 2 }]);
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  ids = made.body.data.insertedIds;
});
afterAll(async () => env.close());

const batch = (headers: Record<string, string>, operations: unknown[]) => call('POST', `/api/projects/${p.id}/data/batch`, headers, { operations });
const price = async (id: string) => (await call('GET', `/api/projects/${p.id}/data/items/${id}`, p.owner.auth)).body.data.price;

describe('dashboard data batch', () => {
  it('applies every operation in one transaction for the owner', async () => {
    const r = await batch(p.owner.auth, ids.map((id) => ({ op: 'update', collection: 'items', id, data: { price: 50 } })));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data.results).toHaveLength(2);
    expect([await price(ids[0]!), await price(ids[1]!)]).toEqual([50, 50]);
  });

  it('writes nothing when one operation is refused, and names it', async () => {
    const r = await batch(p.owner.auth, [
      { op: 'update', collection: 'items', id: ids[0], data: { price: 7 } },
      { op: 'update', collection: 'items', id: ids[1], data: { price: 'seven' } },
    ]);
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/^Operation 1 \(update items\//);
    expect(await price(ids[0]!)).toBe(50);
  });

  it("refuses another operator's session (404) and no session (401)", async () => {
    const other = await makeOperator(env.ctx, { email: 'not-the-owner@example.com' });
    const op = [{ op: 'update', collection: 'items', id: ids[0], data: { price: 1 } }];
    expect((await batch(other.auth, op)).status).toBe(404);
    expect((await batch({}, op)).status).toBe(401);
    expect(await price(ids[0]!)).toBe(50);
  });
});
