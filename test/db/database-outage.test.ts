/**
 * Fault: PostgreSQL goes away (restart, crash, network cut). Clients must be told to come back
 * shortly (503 `database_unavailable` with Retry-After, in the envelope), not be handed a 500,
 * and the node must serve again as soon as the database is back, without a restart. The log
 * says why once per outage, not a stack per request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createTestEnv, type TestEnv } from '../helpers/context.js';
import { makeCollection, makeProject, type TestProject } from '../helpers/fixtures.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

let env: TestEnv;
let proxy: TcpProxy;
let project: TestProject;
const USER = { email: 'outage-user@example.com', password: 'correct horse 1' };
let ip = 1;

beforeAll(async () => {
  const db = new URL(inject('templateUrl'));
  proxy = await startTcpProxy(db.hostname, Number(db.port));
  env = await createTestEnv({ DB_CONNECT_TIMEOUT_MS: '1000' }, { route: (url) => proxy.via(url) });
  project = await makeProject(env.ctx);
  await makeCollection(env.ctx, project.id, 'notes', [{ key: 'title', type: 'String' }]);
  await makeCollection(env.ctx, project.id, 'users', [
    { key: 'email', type: 'String', required: true, unique: true },
    { key: 'password', type: 'String', required: true },
  ]);
  const signup = await env.app.inject({ method: 'POST', url: '/api/userAuth/signup', headers: project.pk, payload: USER });
  expect(signup.statusCode).toBe(201);
});
afterAll(async () => {
  await proxy.restore().catch(() => {});
  await env.close();
  await proxy.close();
});

/** A public data call, an operator login, an end-user login and an operator route. */
const calls = () => [
  env.app.inject({ method: 'GET', url: '/api/data/notes', headers: project.sk }),
  env.app.inject({
    method: 'POST',
    url: '/api/auth/login',
    remoteAddress: `10.9.0.${ip++}`,
    payload: { email: project.owner.email, password: project.owner.password },
  }),
  env.app.inject({ method: 'POST', url: '/api/userAuth/login', headers: project.pk, payload: USER }),
  env.app.inject({ method: 'GET', url: '/api/projects', headers: project.owner.auth }),
];

const linesWith = (text: string) => env.logs.filter((l) => l.includes(text));

describe('PostgreSQL unreachable', () => {
  it('answers 503 database_unavailable with Retry-After, logs the cause once, and serves again once it is back', async () => {
    for (const res of await Promise.all(calls())) expect(res.statusCode).toBe(200);

    await proxy.cut();
    for (let round = 0; round < 3; round++) {
      for (const res of await Promise.all(calls())) {
        expect(res.statusCode, res.body).toBe(503);
        expect(res.headers['retry-after']).toBe('5');
        expect(res.json()).toMatchObject({ success: false, data: {}, code: 'database_unavailable' });
      }
    }
    const health = await env.app.inject({ method: 'GET', url: '/api/health' });
    expect(health.statusCode).toBe(503);

    const down = linesWith('database unreachable');
    expect(down).toHaveLength(1);
    expect(JSON.parse(down[0]!)).toMatchObject({ level: 40, reason: expect.stringMatching(/ECONNREFUSED|Connection terminated/) });
    expect(linesWith('"level":50')).toEqual([]); // no error (with stack) per request

    await proxy.restore();
    for (const res of await Promise.all(calls())) expect(res.statusCode, res.body).toBe(200);
    const up = linesWith('database reachable again');
    expect(up).toHaveLength(1);
    expect(JSON.parse(up[0]!)).toMatchObject({ level: 30, failures: expect.any(Number), downForMs: expect.any(Number) });
  });

  it('a second outage is reported again', async () => {
    await proxy.cut();
    const res = await env.app.inject({ method: 'GET', url: '/api/data/notes', headers: project.sk });
    expect(res.statusCode).toBe(503);
    expect(linesWith('database unreachable')).toHaveLength(2);
    await proxy.restore();
    expect((await env.app.inject({ method: 'GET', url: '/api/data/notes', headers: project.sk })).statusCode).toBe(200);
  });
});
