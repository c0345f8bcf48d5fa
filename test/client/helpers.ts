/**
 * A running Plinth for the client's tests: a test database, the app listening on 127.0.0.1,
 * a project with a users collection, captured auth mail, and collections made through the
 * dashboard API (so search vectors and indexes exist as in production).
 */
import net from 'node:net';
import type { SystemMail } from '../../src/context.js';
import { createTestEnv, type TestEnv } from '../helpers/context.js';
import type { TestProject } from '../helpers/fixtures.js';
import { authProject, captureMail } from '../modules/auth/helpers.js';
import { signOperatorToken } from '../../src/modules/operators/tokens.js';

export interface Running {
  env: TestEnv;
  p: TestProject;
  url: string;
  mail: SystemMail[];
  /** Creates a collection through the dashboard API; answers its record. */
  collection(body: Record<string, unknown>): Promise<unknown>;
  /** PATCH /api/projects/:id as its owner. */
  patchProject(body: Record<string, unknown>): Promise<void>;
}

export async function runPlinth(vars: Record<string, string> = {}): Promise<Running> {
  // A known port first, so PUBLIC_URL (signed upload URLs) names the address the app listens on.
  const port = await new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
  const url = `http://127.0.0.1:${port}`;
  const env = await createTestEnv({ RATE_LIMIT_SCALE: '100', PUBLIC_URL: url, ...vars });
  const mail = captureMail(env);
  const p = await authProject(env);
  await env.app.listen({ port, host: '127.0.0.1' });
  // A fresh operator token per call: tests move the server's clock past a token's life.
  const owner = async () => ({ authorization: `Bearer ${await signOperatorToken(env.ctx.config.dashboardJwtSecret, p.owner.id, env.ctx.clock.now())}` });
  return {
    env,
    p,
    url,
    mail,
    async collection(body) {
      const res = await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/collections`, headers: await owner(), payload: body });
      if (res.statusCode !== 201) throw new Error(`collection: ${res.statusCode} ${res.body}`);
      return res.json().data;
    },
    async patchProject(body) {
      const res = await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}`, headers: await owner(), payload: body });
      if (res.statusCode !== 200) throw new Error(`patch project: ${res.statusCode} ${res.body}`);
    },
  };
}

/** A fetch that records every request (method, path, headers) before sending it. */
export function recordingFetch(log: Array<{ method: string; path: string; headers: Record<string, string> }>, inner: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const u = new URL(String(input));
    log.push({ method: init?.method ?? 'GET', path: u.pathname + u.search, headers: { ...(init?.headers as Record<string, string>) } });
    return inner(input, init);
  };
}
