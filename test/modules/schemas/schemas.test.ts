/** The public schemas API: read with either key, create with the secret key only. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { api } from '../data/helpers.js';

let env: TestEnv;
let p: TestProject;
let A: ReturnType<typeof api>;

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  A = api(env);
});
afterAll(() => env.close());

describe('/api/schemas', () => {
  it('creates from the public field form with the secret key (201), pk is 403', async () => {
    const body = { name: 'orders', fields: [{ name: 'total', type: 'number', required: true }, { name: 'code', type: 'string', unique: true }] };
    const denied = await A.post('/api/schemas', p.pk, body);
    expect(denied.status).toBe(403);
    expect(denied.body.message).toBe('Forbidden. This action requires a Secret Key (sk_live_...).');
    const r = await A.post('/api/schemas', p.sk, body);
    expect(r.status).toBe(201);
    expect(r.body.data.collection.model).toEqual([
      { key: 'total', type: 'Number', required: true },
      { key: 'code', type: 'String', unique: true },
    ]);
    expect((await A.post('/api/schemas', p.sk, body)).status).toBe(409);
    const bad = await A.post('/api/schemas', p.sk, { name: 'x', fields: [{ name: 'o', type: 'object', unique: true, fields: [{ name: 'a', type: 'string' }] }] });
    expect(bad.status).toBe(400);
    // The new collection is usable at once, its unique field enforced.
    expect((await A.post('/api/data/orders', p.sk, { total: 1, code: 'A' })).status).toBe(201);
    expect((await A.post('/api/data/orders', p.sk, { total: 2, code: 'A' })).status).toBe(409);
  });

  it('reads with either key, without secrets; unknown is 404', async () => {
    for (const h of [p.pk, p.sk]) {
      const r = await A.get('/api/schemas/orders', h);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ success: true, message: 'Schema exists', data: { collection: { _id: expect.any(String), name: 'orders', rls: { enabled: false } } } });
      expect(JSON.stringify(r.body)).not.toMatch(/sk_live|pk_live|jwt/i);
    }
    const missing = await A.get('/api/schemas/nothing', p.pk);
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe('Schema/Collection not found');
    expect((await A.get('/api/schemas/orders', {})).status).toBe(401);
  });
});
