/**
 * Under `mfaPolicy: "require"`, a data read that carries a user token is judged by it
 * (docs/auth.md "Project policy"), on public-read and open collections too, whose reads skip the
 * token otherwise: list, get, count, search and aggregate with an aal1 token are refused with the
 * code private reads give; without a token they answer 200 as before; with aal2, 200.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectId } from '../../../src/lib/ids.js';
import { amrEntry, firstFactor, withSecondFactor } from '../../../src/lib/identity/assurance.js';
import { signAccessToken } from '../../../src/modules/auth/tokens.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { createCollection } from '../data/helpers.js';

let env: TestEnv;
let p: TestProject;
const docIds = new Map<string, string>();
let aal1: string;
let aal2: string;

async function token(aal: 'aal1' | 'aal2'): Promise<string> {
  const record = await env.ctx.projects.byId(p.id);
  const now = env.ctx.clock.now();
  const assurance = aal === 'aal2' ? withSecondFactor([amrEntry('pwd', now)], 'totp', now) : firstFactor('pwd', now);
  return signAccessToken(record!, objectId(), 900, now, { ...assurance, sid: objectId() });
}

beforeAll(async () => {
  env = await createTestEnv();
  p = await makeProject(env.ctx);
  const schema = [{ key: 'title', type: 'String', searchable: true }, { key: 'n', type: 'Number' }, { key: 'userId', type: 'String' }];
  await createCollection(env, p, 'posts', schema, { enabled: true, mode: 'public-read', ownerField: 'userId' });
  await createCollection(env, p, 'open', schema);
  await createCollection(env, p, 'mine', schema, { enabled: true, mode: 'private', ownerField: 'userId' });
  for (const c of ['posts', 'open']) {
    const res = await env.app.inject({ method: 'POST', url: `/api/data/${c}`, headers: p.sk, payload: { title: 'hello world', n: 1 } });
    expect(res.statusCode, res.body).toBe(201);
    docIds.set(c, res.json()._id);
  }
  const res = await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}`, headers: p.owner.auth, payload: { mfaPolicy: 'require' } });
  expect(res.statusCode, res.body).toBe(200);
  aal1 = await token('aal1');
  aal2 = await token('aal2');
}, 60_000);
afterAll(() => env?.close());

const reads = (c: string) => ({
  list: `/api/data/${c}`,
  count: `/api/data/${c}?count=true`,
  search: `/api/data/${c}?search=hello`,
  aggregate: `/api/data/${c}/aggregate?count`,
  get: `/api/data/${c}/${docIds.get(c)!}`,
});
const get = (url: string, authorization?: string) =>
  env.app.inject({ method: 'GET', url, headers: authorization ? { ...p.pk, authorization } : p.pk });

describe('mfaPolicy require: public reads that carry a token', () => {
  it('private reads refuse an aal1 token (the code the public reads must give too)', async () => {
    const res = await get('/api/data/mine', `Bearer ${aal1}`);
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('mfa_enrollment_required');
  });

  for (const c of ['posts', 'open']) {
    it(`${c}: list, count, search, aggregate and get with an aal1 token are refused`, async () => {
      for (const [what, url] of Object.entries(reads(c))) {
        const res = await get(url, `Bearer ${aal1}`);
        expect(res.statusCode, `${what}: ${res.body}`).toBe(403);
        expect(res.json().code, what).toBe('mfa_enrollment_required');
        expect(res.body).not.toContain('hello world');
      }
    });

    it(`${c}: without a token, or with an aal2 token, they answer 200`, async () => {
      for (const [what, url] of Object.entries(reads(c))) {
        for (const auth of [undefined, `Bearer ${aal2}`, 'Bearer not-a-token']) {
          const res = await get(url, auth);
          expect(res.statusCode, `${what} ${auth ?? 'no token'}: ${res.body}`).toBe(200);
        }
      }
    });
  }
});
