/**
 * The address an audit entry records is the client's as TRUST_PROXY lets Fastify read it:
 * through the trusted proxy, the address it forwarded; from anywhere else the header is ignored
 * and the TCP peer is recorded.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject } from '../../helpers/fixtures.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv({ TRUST_PROXY: '10.0.0.2' });
}, 60_000);
afterAll(() => env?.close());

it('records the forwarded client address behind a trusted proxy', async () => {
  const p = await makeProject(env.ctx);
  const res = await env.app.inject({
    method: 'PATCH',
    url: `/api/projects/${p.id}`,
    headers: { ...p.owner.auth, 'x-forwarded-for': '198.51.100.23' },
    remoteAddress: '10.0.0.2',
    payload: { description: 'via proxy' },
  });
  expect(res.statusCode).toBe(200);
  const list = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/audit`, headers: p.owner.auth });
  expect(list.json().data.items[0]).toMatchObject({ action: 'settings.update', ip: '198.51.100.23' });
  // Not through the proxy: the forged header counts for nothing.
  const direct = await env.app.inject({
    method: 'PATCH',
    url: `/api/projects/${p.id}`,
    headers: { ...p.owner.auth, 'x-forwarded-for': '198.51.100.99' },
    remoteAddress: '192.0.2.50',
    payload: { description: 'direct' },
  });
  expect(direct.statusCode).toBe(200);
  const again = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/audit`, headers: p.owner.auth });
  expect(again.json().data.items[0]).toMatchObject({ seq: 2, ip: '192.0.2.50' });
});
