/**
 * `@auth.claims.<name>` (docs/rules.md): access rules read the custom claims a token-claims
 * function put in the access token. Proven through the data API (list, get, count, aggregate,
 * search, create, update, delete, batch), with users signed up for real (the claims come from
 * the hook), in the direct pool mode and as behind a transaction pooler (unnamed statements,
 * each carrying its scope); and the attacks: a token without claims, a forged token (claims
 * changed, or signed with another key), claim values carrying SQL, claim names a hook may not
 * write.
 */
import { SignJWT, decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { USERS_FIELDS, type TestProject } from '../../helpers/fixtures.js';
import { authProject, captureMail, signup } from '../auth/helpers.js';
import { api, createCollection } from '../data/helpers.js';

const FIELDS = [...USERS_FIELDS, { key: 'team', type: 'String' as const }, { key: 'level', type: 'Number' as const }];
/** Values that would break out of a quoted SQL literal if anything pasted them into SQL. */
const EVIL_TEAM = "x'); DROP TABLE documents; -- \\' \" $$ \\";

/** Forges a token from a real one: the payload changed, the signature kept (it no longer matches). */
function tampered(token: string, change: (payload: Record<string, unknown>) => void): string {
  const [head, , sig] = token.split('.');
  const payload = decodeJwt(token) as Record<string, unknown>;
  change(payload);
  return `${head}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${sig}`;
}

describe.each([
  { mode: 'direct pool', pooled: false },
  { mode: 'transaction-pooler scope (unnamed statements)', pooled: true },
])('@auth.claims through the data API: $mode', ({ pooled }) => {
  let env: TestEnv;
  let p: TestProject;
  let A: ReturnType<typeof api>;
  const as: Record<string, Record<string, string>> = {};
  const token: Record<string, string> = {};
  const doc: Record<string, string> = {};
  const ids = (r: { body: { data: { items: Array<{ _id: string }> } } }) => r.body.data.items.map((d) => d._id).sort();

  beforeAll(async () => {
    env = await createTestEnv({ RATE_LIMIT_SCALE: '100' }, { pooled });
    captureMail(env);
    p = await authProject(env, FIELDS);
    A = api(env);
    const hook = await env.app.inject({
      method: 'POST',
      url: `/api/projects/${p.id}/functions`,
      headers: p.owner.auth,
      payload: { name: 'claims', kind: 'auth', trigger: { event: 'token-claims' }, source: 'export default ({ user }) => (user.team ? { claims: { team: user.team, level: user.level ?? 0 } } : null)' },
    });
    expect(hook.statusCode, hook.body).toBe(201);
    await createCollection(env, p, 'docs', [
      { key: 'team', type: 'String' },
      { key: 'title', type: 'String', searchable: true },
      { key: 'level', type: 'Number' },
    ]);
    const sameTeam = 'team = @auth.claims.team';
    const rules = await env.app.inject({
      method: 'PATCH',
      url: `/api/projects/${p.id}/collections/docs/rules`,
      headers: p.owner.auth,
      payload: { list: `${sameTeam} && level <= @auth.claims.level`, create: '@data.team = @auth.claims.team', update: sameTeam, delete: sameTeam },
    });
    expect(rules.statusCode, rules.body).toBe(200);
    for (const [name, team, level] of [['blue1', 'blue', 1], ['blue2', 'blue', 1], ['blueSecret', 'blue', 9], ['red1', 'red', 1], ['evil', EVIL_TEAM, 1]] as const) {
      const res = await A.post('/api/data/docs', p.sk, { team, title: `alpha ${name}`, level });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      doc[name] = res.body._id;
    }
    for (const [name, body] of Object.entries({ blue: { team: 'blue', level: 5 }, red: { team: 'red', level: 5 }, none: {}, evil: { team: EVIL_TEAM, level: 5 } })) {
      const up = await signup(env, p, { ...body, username: `${name}-${pooled ? 'p' : 'd'}` });
      expect(up.res.statusCode, up.res.body).toBe(201);
      token[name] = up.body.data.accessToken;
      as[name] = { ...p.pk, authorization: `Bearer ${token[name]}` };
    }
    expect(decodeJwt(token.blue!).claims).toEqual({ team: 'blue', level: 5 });
    expect(decodeJwt(token.none!).claims).toBeUndefined();
  });
  afterAll(() => env?.close());

  it('a user of team blue lists, gets, counts, aggregates and searches blue documents only (and only up to their level)', async () => {
    expect(ids(await A.get('/api/data/docs', as.blue!))).toEqual([doc.blue1, doc.blue2].sort());
    expect(ids(await A.get('/api/data/docs', as.red!))).toEqual([doc.red1]);
    expect((await A.get(`/api/data/docs/${doc.blue1}`, as.blue!)).status).toBe(200);
    expect((await A.get(`/api/data/docs/${doc.red1}`, as.blue!)).status).toBe(404);
    expect((await A.get(`/api/data/docs/${doc.blueSecret}`, as.blue!)).status).toBe(404);
    expect((await A.get('/api/data/docs?count=true', as.blue!)).body.data.count).toBe(2);
    expect((await A.get('/api/data/docs/aggregate?count', as.blue!)).body.data.groups).toEqual([{ key: {}, count: 2 }]);
    expect((await A.get('/api/data/docs/aggregate?groupBy=team', as.red!)).body.data.groups).toEqual([{ key: { team: 'red' }, count: 1 }]);
    expect(ids(await A.get('/api/data/docs?search=alpha', as.blue!))).toEqual([doc.blue1, doc.blue2].sort());
    expect(ids(await A.get('/api/data/docs?search=red1', as.blue!))).toEqual([]);
    // The pooled set-up really reads through the other address (the "pooler").
    const viaPooler = await env.ctx.db.admin.selectFrom('pg_stat_activity' as never).select((eb) => eb.fn.countAll<number>().as('n')).where('application_name' as never, '=', 'plinth-pooled' as never).executeTakeFirstOrThrow();
    expect(Number(viaPooler.n) > 0).toBe(pooled);
  });

  it('updates and deletes follow the claim: blue changes blue documents, never red ones; creates only as its team', async () => {
    const redEdit = await A.patch(`/api/data/docs/${doc.red1}`, as.blue!, { title: 'taken' });
    expect([403, 404]).toContain(redEdit.status);
    expect([403, 404]).toContain((await A.del(`/api/data/docs/${doc.red1}`, as.blue!)).status);
    // Moving its own document to red is refused too (the update rule holds after the write).
    expect((await A.patch(`/api/data/docs/${doc.blue1}`, as.blue!, { team: 'red' })).status).toBe(403);
    const red = await A.get(`/api/data/docs/${doc.red1}`, p.sk);
    expect(red.body.data).toMatchObject({ team: 'red', title: 'alpha red1' });
    expect((await A.get(`/api/data/docs/${doc.blue1}`, p.sk)).body.data.team).toBe('blue');

    const edit = await A.patch(`/api/data/docs/${doc.blue1}`, as.blue!, { title: 'edited' });
    expect(edit.status, JSON.stringify(edit.body)).toBe(200);
    expect((await A.get(`/api/data/docs/${doc.blue1}`, p.sk)).body.data.title).toBe('edited');
    expect((await A.post('/api/data/docs', as.blue!, { team: 'red', title: 'spy', level: 1 })).status).toBe(403);
    const mine = await A.post('/api/data/docs', as.blue!, { team: 'blue', title: 'mine', level: 1 });
    expect(mine.status, JSON.stringify(mine.body)).toBe(201);
    expect((await A.del(`/api/data/docs/${mine.body._id}`, as.blue!)).status).toBe(200);
    expect((await A.get(`/api/data/docs/${mine.body._id}`, as.blue!)).status).toBe(404);
    const batch = await A.post('/api/data/batch', as.blue!, { operations: [{ op: 'update', collection: 'docs', id: doc.red1, data: { title: 'taken' } }] });
    expect([403, 404]).toContain(batch.status);
    expect((await A.get(`/api/data/docs/${doc.red1}`, p.sk)).body.data.title).toBe('alpha red1');
  });

  it('a token without claims, and no token, see nothing and write nothing under the rule (a missing claim is null)', async () => {
    expect(ids(await A.get('/api/data/docs', as.none!))).toEqual([]);
    expect(ids(await A.get('/api/data/docs', p.pk))).toEqual([]);
    expect((await A.get(`/api/data/docs/${doc.blue1}`, as.none!)).status).toBe(404);
    expect([403, 404]).toContain((await A.patch(`/api/data/docs/${doc.blue2}`, as.none!, { title: 'x' })).status);
    expect((await A.post('/api/data/docs', as.none!, { title: 'no team', level: 1 })).status).toBe(403);
  });

  it('a forged token is refused: claims changed under the old signature, or signed with another key', async () => {
    const changed = tampered(token.red!, (pl) => void ((pl.claims as Record<string, unknown>).team = 'blue'));
    const otherKey = await new SignJWT({ ...decodeJwt(token.red!), claims: { team: 'blue', level: 99 } })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode('not-the-project-secret-0123456789abcdef'));
    for (const forged of [changed, otherKey]) {
      const h = { ...p.pk, authorization: `Bearer ${forged}` };
      // An invalid token counts as none for reads (docs/auth.md): nothing of blue's is seen.
      expect(ids(await A.get('/api/data/docs', h))).toEqual([]);
      expect((await A.get(`/api/data/docs/${doc.blue2}`, h)).status).toBe(404);
      const write = await A.patch(`/api/data/docs/${doc.blue2}`, h, { title: 'forged' });
      expect([401, 403, 404]).toContain(write.status);
    }
    expect((await A.get(`/api/data/docs/${doc.blue2}`, p.sk)).body.data.title).toBe('alpha blue2');
  });

  it('claim values carrying quotes, backslashes and SQL stay values: in reads (parameters) and in write transactions (quoted)', async () => {
    expect(decodeJwt(token.evil!).claims).toMatchObject({ team: EVIL_TEAM });
    expect(ids(await A.get('/api/data/docs', as.evil!))).toEqual([doc.evil]);
    const edit = await A.patch(`/api/data/docs/${doc.evil}`, as.evil!, { title: 'still here' });
    expect(edit.status, JSON.stringify(edit.body)).toBe(200);
    expect((await A.get('/api/data/docs?count=true', p.sk)).body.data.count).toBeGreaterThanOrEqual(5);
  });

  it('the users collection’s rules read the claims too: a public profile and a profile update', async () => {
    const set = await env.app.inject({
      method: 'PATCH', url: `/api/projects/${p.id}/collections/users/rules`, headers: p.owner.auth,
      payload: { view: 'id = @auth.id || @auth.claims.team = "blue"', update: 'id = @auth.id && @auth.claims.team != null' },
    });
    expect(set.statusCode, set.body).toBe(200);
    const profile = (who: string, of: string) => env.app.inject({ method: 'GET', url: `/api/userAuth/public/${of}-${pooled ? 'p' : 'd'}`, headers: as[who]! });
    expect((await profile('blue', 'red')).statusCode).toBe(200);
    expect((await profile('red', 'blue')).statusCode).toBe(404);
    expect((await profile('none', 'blue')).statusCode).toBe(404);
    const update = (who: string) => env.app.inject({ method: 'PUT', url: '/api/userAuth/update-profile', headers: as[who]!, payload: { name: 'renamed' } });
    expect((await update('red')).statusCode).toBe(200);
    expect((await update('none')).statusCode).toBe(403);
  });

  it('claim names a token-claims function may not write are refused in a rule, with the position; nothing is saved', async () => {
    for (const [rule, position] of [['@auth.claims.__proto__ = "x"', 1], ['@auth.claims.constructor.team = "x"', 1], ["@auth.claims.team' OR '1'='1 = \"x\"", 18]] as const) {
      const res = await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/collections/docs/rules`, headers: p.owner.auth, payload: { list: rule } });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'rule_invalid', action: 'list', position });
    }
    expect(ids(await A.get('/api/data/docs', as.red!))).toEqual([doc.red1]);
  });
});
