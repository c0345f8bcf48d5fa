/**
 * The synchronous auth hooks end to end (docs/functions.md "Auth hooks"): a before-sign-up
 * function that refuses (its status, code and message in the envelope; no user, no mail) or
 * enriches (a readOnly role that a rule then reads) every way of signing up, and fails closed
 * (a loop stops at its CPU limit, a 500 refuses); a token-claims function whose claims land in
 * the access token under `claims`, on sign-in and on refresh. Only the dashboard deploys.
 */
import { decodeJwt } from 'jose';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SystemMail } from '../../../src/context.js';
import { signOperatorToken } from '../../../src/modules/operators/tokens.js';
import type { TestEnv } from '../../helpers/context.js';
import { USERS_FIELDS, type TestProject } from '../../helpers/fixtures.js';
import { authProject, authTestEnv, lastCode, PASSWORD, refresh, signup, uniqueEmail } from '../auth/helpers.js';
import { createCollection } from '../data/helpers.js';

let env: TestEnv;
let mail: SystemMail[];
let p: TestProject;

const FIELDS = [...USERS_FIELDS, { key: 'role', type: 'String' as const, readOnly: true, default: 'reader' }, { key: 'plan', type: 'String' as const }];

async function deploy(project: TestProject, name: string, event: string, source: string, headers: Record<string, string> = project.owner.auth) {
  const res = await env.app.inject({ method: 'POST', url: `/api/projects/${project.id}/functions`, headers, payload: { name, kind: 'auth', trigger: { event }, source } });
  return res;
}
async function replace(project: TestProject, name: string, source: string) {
  const res = await env.app.inject({ method: 'PATCH', url: `/api/projects/${project.id}/functions/${name}`, headers: project.owner.auth, payload: { source } });
  expect(res.statusCode, res.body).toBe(200);
}
const userRow = (project: TestProject, email: string) =>
  env.ctx.db.admin.selectFrom('app_users').select(['id', 'data']).where('project_id', '=', project.id).where('email', '=', email).executeTakeFirst();
const sessionsOf = async (userId: string) =>
  Number((await env.ctx.db.admin.selectFrom('app_user_sessions').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow()).n);
const ownerAuth = async (proj: TestProject) => ({ authorization: `Bearer ${await signOperatorToken(env.ctx.config.dashboardJwtSecret, proj.owner.id, env.clock.now())}` });

beforeAll(async () => {
  ({ env, mail, p } = await authTestEnv(FIELDS));
  const settings = await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}`, headers: await ownerAuth(p), payload: { allowAnonymous: true } });
  expect(settings.statusCode, settings.body).toBe(200);
  // Sign-ups of *@blocked.test are refused; of *@corp.test become editors; everyone says how they came.
  const res = await deploy(p, 'gate', 'before-sign-up', `export default (e) => {
    if (e.email && e.email.endsWith('@blocked.test')) throw new PlinthError('Sign-ups from this domain are closed', { status: 403, code: 'domain_closed' });
    if (e.email && e.email.endsWith('@loop.test')) { for (;;) {} }
    if (e.email && e.email.endsWith('@crash.test')) throw new PlinthError('boom', { status: 500, code: 'boom' });
    if (e.email && e.email.endsWith('@bad.test')) return { data: { email: 'other@x.test' } };
    return { data: { plan: e.method, ...(e.email && e.email.endsWith('@corp.test') ? { role: 'editor' } : {}) } };
  }`);
  expect(res.statusCode, res.body).toBe(201);
});
afterAll(() => env.close());

describe('before-sign-up', () => {
  it('refuses with its own status, code and message; no user is written and no mail is sent', async () => {
    const email = uniqueEmail('no').replace('@example.com', '@blocked.test');
    const { res, body } = await signup(env, p, { email });
    expect(res.statusCode).toBe(403);
    expect(body).toMatchObject({ success: false, code: 'domain_closed', message: 'Sign-ups from this domain are closed' });
    expect(await userRow(p, email)).toBeUndefined();
    expect(mail.filter((m) => m.to === email)).toEqual([]);
  });

  it('enriches the new user: a readOnly role the client could not set, which a rule then reads', async () => {
    await createCollection(env, p, 'articles', [{ key: 'title', type: 'String' }]);
    const rules = await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/collections/articles/rules`, headers: p.owner.auth, payload: { list: 'true', create: '@auth.role in ["editor"]' } });
    expect(rules.statusCode, rules.body).toBe(200);
    const editor = await signup(env, p, { email: uniqueEmail('ed').replace('@example.com', '@corp.test') });
    expect(editor.res.statusCode, editor.res.body).toBe(201);
    expect(editor.body.data.user).toMatchObject({ role: 'editor', plan: 'password' });
    const reader = await signup(env, p);
    expect(reader.body.data.user).toMatchObject({ role: 'reader', plan: 'password' });
    const post = (token: string) => env.app.inject({ method: 'POST', url: '/api/data/articles', headers: { ...p.pk, authorization: `Bearer ${token}` }, payload: { title: 't' } });
    expect((await post(editor.body.data.accessToken)).statusCode).toBe(201);
    expect((await post(reader.body.data.accessToken)).statusCode).toBe(403);
    // The client itself still cannot give itself the role.
    expect((await signup(env, p, { role: 'editor' })).res.statusCode).toBe(403);
  });

  it('runs for a magic link, an email code, a guest and a guest linking an email', async () => {
    const byLink = uniqueEmail('link');
    expect((await env.app.inject({ method: 'POST', url: '/api/userAuth/passwordless/start', headers: p.pk, payload: { email: byLink } })).statusCode).toBe(200);
    const text = [...mail].reverse().find((m) => m.to === byLink)!.text ?? '';
    const token = new URLSearchParams(new URL(/(https?:\/\/\S+)/.exec(text)![1]!.replace(/\.$/, '')).hash.slice(1)).get('token');
    const verify = (payload: Record<string, unknown>) => env.app.inject({ method: 'POST', url: '/api/userAuth/passwordless/verify', headers: { ...p.pk, 'x-refresh-token-mode': 'header' }, payload });
    const linked = await verify({ token });
    expect(linked.statusCode, linked.body).toBe(200);
    expect(linked.json().data.user).toMatchObject({ plan: 'magic-link', role: 'reader' });

    const byCode = uniqueEmail('code').replace('@example.com', '@corp.test');
    await env.app.inject({ method: 'POST', url: '/api/userAuth/passwordless/start', headers: p.pk, payload: { email: byCode } });
    const coded = await verify({ email: byCode, code: lastCode(mail, byCode, 'auth.passwordless') });
    expect(coded.statusCode, coded.body).toBe(200);
    expect(coded.json().data.user).toMatchObject({ plan: 'code', role: 'editor' });

    const refused = uniqueEmail('nolink').replace('@example.com', '@blocked.test');
    await env.app.inject({ method: 'POST', url: '/api/userAuth/passwordless/start', headers: p.pk, payload: { email: refused } });
    const no = await verify({ email: refused, code: lastCode(mail, refused, 'auth.passwordless') });
    expect(no.statusCode).toBe(403);
    expect(no.json().code).toBe('domain_closed');
    expect(await userRow(p, refused)).toBeUndefined();

    const guest = await env.app.inject({ method: 'POST', url: '/api/userAuth/anonymous', headers: { ...p.pk, 'x-refresh-token-mode': 'header' } });
    expect(guest.statusCode, guest.body).toBe(201);
    expect(guest.json().data.user).toMatchObject({ plan: 'anonymous', isAnonymous: true });
    const asGuest = { ...p.pk, authorization: `Bearer ${guest.json().data.accessToken}` };
    const linkEmail = (email: string) => env.app.inject({ method: 'POST', url: '/api/userAuth/anonymous/link-email', headers: asGuest, payload: { email, password: PASSWORD } });
    const blocked = await linkEmail(uniqueEmail('g').replace('@example.com', '@blocked.test'));
    expect(blocked.statusCode).toBe(403);
    expect(blocked.json().code).toBe('domain_closed');
    const upgraded = await linkEmail(uniqueEmail('g').replace('@example.com', '@corp.test'));
    expect(upgraded.statusCode, upgraded.body).toBe(200);
    expect(upgraded.json().data.user).toMatchObject({ plan: 'link-email', role: 'editor', isAnonymous: false });
  });

  it('fails closed: a loop stops at the CPU limit, a 500 or an answer setting the email refuses; no user is left', async () => {
    const loop = uniqueEmail('loop').replace('@example.com', '@loop.test');
    const started = Date.now();
    const looped = await signup(env, p, { email: loop });
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(looped.res.statusCode).toBe(504);
    expect(looped.body.code).toBe('function_cpu_limit');
    expect(await userRow(p, loop)).toBeUndefined();
    await env.ctx.functions.log.flush();
    const log = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/functions/gate/invocations`, headers: p.owner.auth });
    expect(log.json().data.invocations[0]).toMatchObject({ ok: false, trigger: 'auth.before-sign-up', errorCode: 'function_cpu_limit' });

    const crash = uniqueEmail('crash').replace('@example.com', '@crash.test');
    const crashed = await signup(env, p, { email: crash });
    expect(crashed.res.statusCode).toBe(502);
    expect(crashed.body.code).toBe('function_error');
    expect(await userRow(p, crash)).toBeUndefined();

    const bad = uniqueEmail('bad').replace('@example.com', '@bad.test');
    const refused = await signup(env, p, { email: bad });
    expect(refused.res.statusCode).toBe(502);
    expect(refused.body.code).toBe('function_result_invalid');
    expect(await userRow(p, bad)).toBeUndefined();
    expect(await userRow(p, 'other@x.test')).toBeUndefined();
  }, 20_000);

  it('a disabled hook lets sign-ups through untouched', async () => {
    const off = await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/functions/gate`, headers: p.owner.auth, payload: { enabled: false } });
    expect(off.statusCode).toBe(200);
    const { res, body } = await signup(env, p, { email: uniqueEmail('off').replace('@example.com', '@blocked.test') });
    expect(res.statusCode).toBe(201);
    expect(body.data.user.plan).toBeUndefined();
    await env.app.inject({ method: 'PATCH', url: `/api/projects/${p.id}/functions/gate`, headers: p.owner.auth, payload: { enabled: true } });
  });
});

describe('token-claims', () => {
  let q: TestProject;
  beforeAll(async () => {
    q = await authProject(env, FIELDS);
    const res = await deploy(q, 'claims', 'token-claims', `export default ({ user, method }) => {
      if (user.name === 'stop') throw new PlinthError('No tokens for you', { status: 403, code: 'no_tokens' });
      return { claims: { team: 'blue', plan: user.plan ?? 'free', method, hasPassword: 'password' in user } };
    }`);
    expect(res.statusCode, res.body).toBe(201);
  });

  it('adds claims under `claims` on sign-up, login and refresh; reserved claims stay the server’s', async () => {
    const email = uniqueEmail('tc');
    const up = await signup(env, q, { email, plan: 'pro' });
    expect(up.res.statusCode, up.res.body).toBe(201);
    const claims = decodeJwt(up.body.data.accessToken);
    expect(claims.claims).toEqual({ team: 'blue', plan: 'pro', method: 'pwd', hasPassword: false });
    expect(claims.sub).toBe(up.body.data.user._id);

    const login = await env.app.inject({ method: 'POST', url: '/api/userAuth/login', headers: { ...q.pk, 'x-refresh-token-mode': 'header' }, payload: { email, password: PASSWORD } });
    expect(login.statusCode, login.body).toBe(200);
    expect(decodeJwt(login.json().data.accessToken).claims).toMatchObject({ team: 'blue', method: 'pwd' });

    const refreshed = await refresh(env, q, up.body.data.refreshToken);
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    expect(decodeJwt(refreshed.json().data.accessToken).claims).toMatchObject({ team: 'blue', plan: 'pro', method: 'refresh' });
  });

  it('refuses a token with the hook’s 4xx, and a failing hook on refresh leaves the refresh token usable', async () => {
    const email = uniqueEmail('stop');
    const stopped = await signup(env, q, { name: 'stop', email });
    expect(stopped.res.statusCode).toBe(403);
    expect(stopped.body.code).toBe('no_tokens');
    // The account is committed (documented); no session is left that nobody holds a token of.
    const refused = await userRow(q, email);
    expect(refused).toBeDefined();
    expect(await sessionsOf(refused!.id)).toBe(0);

    const { body } = await signup(env, q);
    await replace(q, 'claims', `export default () => { throw new Error('down'); }`);
    const failed = await refresh(env, q, body.data.refreshToken);
    expect(failed.statusCode).toBe(502);
    expect(failed.json().code).toBe('function_error');
    await replace(q, 'claims', `export default () => ({ claims: { back: true } })`);
    const again = await refresh(env, q, body.data.refreshToken);
    expect(again.statusCode, again.body).toBe(200);
    expect(decodeJwt(again.json().data.accessToken).claims).toEqual({ back: true });

    await replace(q, 'claims', `export default () => ({ claims: { big: 'x'.repeat(5000) } })`);
    const big = await refresh(env, q, again.json().data.refreshToken);
    expect(big.json().code).toBe('function_result_invalid');
  });
});

describe('token-claims runs outside the sign-in’s transaction', () => {
  let r: TestProject;
  const H = () => ({ ...r.pk, 'x-refresh-token-mode': 'header' });
  beforeAll(async () => {
    r = await authProject(env, FIELDS);
    const on = await env.app.inject({ method: 'PATCH', url: `/api/projects/${r.id}`, headers: await ownerAuth(r), payload: { allowAnonymous: true } });
    expect(on.statusCode, on.body).toBe(200);
    await createCollection(env, r, 'teams', [{ key: 'name', type: 'String' }]);
    // Readable by a user whose row exists (committed): plinth_auth_user() finds it.
    const rules = await env.app.inject({ method: 'PATCH', url: `/api/projects/${r.id}/collections/teams/rules`, headers: r.owner.auth, payload: { list: '@auth.verified = true || @auth.verified = false' } });
    expect(rules.statusCode, rules.body).toBe(200);
    expect((await env.app.inject({ method: 'POST', url: '/api/data/teams', headers: r.sk, payload: { name: 'blue' } })).statusCode).toBe(201);
    // It sleeps (no CPU), then reads as the user: a transaction left open around it would show.
    const res = await deploy(r, 'claims', 'token-claims', `export default async ({ user }, plinth) => {
      await new Promise((done) => setTimeout(done, 400));
      if (user.name === 'stop') throw new PlinthError('No tokens for you', { status: 403, code: 'no_tokens' });
      const { items } = await plinth.data.collection('teams').list();
      return { claims: { team: items.length ? items[0].name : null } };
    }`);
    expect(res.statusCode, res.body).toBe(201);
  });

  /**
   * While `run` is in flight, polled every 20 ms: the share of polls that saw a connection of the
   * database idle in a transaction, and a tenant connection held. The sign-in's own statements
   * take a few milliseconds of it; a hook run inside them would take its whole 400 ms sleep.
   */
  async function watch<T>(run: () => Promise<T>): Promise<{ out: T; idleInTx: number; held: number }> {
    let polls = 0;
    let idle = 0;
    let held = 0;
    let done = false;
    const poll = (async () => {
      while (!done) {
        const row = await env.ctx.db.admin
          .selectFrom('pg_stat_activity' as never)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('datname' as never, '=', sql`current_database()` as never)
          .where('state' as never, '=', 'idle in transaction' as never)
          .executeTakeFirstOrThrow();
        const t = env.ctx.db.usage().tenant;
        polls++;
        if (Number(row.n) > 0) idle++;
        if (t.total - t.idle > 0) held++;
        await new Promise((res) => setTimeout(res, 20));
      }
    })();
    let out: T;
    try {
      out = await run();
    } finally {
      done = true;
      await poll;
    }
    return { out, idleInTx: idle / polls, held: held / polls };
  }


  it('a guest’s and a new passwordless user’s hook reads the committed user, with no transaction open and no connection held while it runs', async () => {
    const guest = await watch(() => env.app.inject({ method: 'POST', url: '/api/userAuth/anonymous', headers: H() }));
    expect(guest.out.statusCode, guest.out.body).toBe(201);
    expect(guest.idleInTx).toBeLessThan(0.4);
    expect(guest.held).toBeLessThan(0.4);
    expect(decodeJwt(guest.out.json().data.accessToken).claims).toEqual({ team: 'blue' });

    const email = uniqueEmail('pl');
    await env.app.inject({ method: 'POST', url: '/api/userAuth/passwordless/start', headers: r.pk, payload: { email } });
    const coded = await watch(() => env.app.inject({ method: 'POST', url: '/api/userAuth/passwordless/verify', headers: H(), payload: { email, code: lastCode(mail, email, 'auth.passwordless') } }));
    expect(coded.out.statusCode, coded.out.body).toBe(200);
    expect(coded.out.json().data.isNewUser).toBe(true);
    expect(decodeJwt(coded.out.json().data.accessToken).claims).toEqual({ team: 'blue' });
    expect(coded.idleInTx).toBeLessThan(0.4);
    expect(coded.held).toBeLessThan(0.4);
  }, 20_000);

  it('a login holds no connection while the hook runs; a refusal answers its 4xx and leaves no session behind', async () => {
    const email = uniqueEmail('li');
    expect((await signup(env, r, { email })).res.statusCode).toBe(201);
    const login = await watch(() => env.app.inject({ method: 'POST', url: '/api/userAuth/login', headers: H(), payload: { email, password: PASSWORD } }));
    expect(login.out.statusCode, login.out.body).toBe(200);
    expect(decodeJwt(login.out.json().data.accessToken).claims).toEqual({ team: 'blue' });
    expect(login.held).toBeLessThan(0.4);

    const stop = uniqueEmail('st');
    expect((await signup(env, r, { email: stop, name: 'stop' })).res.statusCode).toBe(403);
    const user = await userRow(r, stop);
    const refused = await env.app.inject({ method: 'POST', url: '/api/userAuth/login', headers: H(), payload: { email: stop, password: PASSWORD } });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe('no_tokens');
    expect(await sessionsOf(user!.id)).toBe(0);
  }, 20_000);
});

describe('the claims reach functions: plinth.caller.claims and plinth.data as the caller', () => {
  let s: TestProject;
  beforeAll(async () => {
    s = await authProject(env, FIELDS);
    expect((await deploy(s, 'claims', 'token-claims', `export default ({ user }) => (user.plan ? { claims: { team: user.plan } } : null)`)).statusCode).toBe(201);
    await createCollection(env, s, 'notes', [{ key: 'team', type: 'String' }, { key: 'by', type: 'String' }]);
    const rules = await env.app.inject({
      method: 'PATCH', url: `/api/projects/${s.id}/collections/notes/rules`, headers: s.owner.auth,
      payload: { list: 'team = @auth.claims.team', create: '@data.team = @auth.claims.team' },
    });
    expect(rules.statusCode, rules.body).toBe(200);
    for (const team of ['blue', 'red']) expect((await env.app.inject({ method: 'POST', url: '/api/data/notes', headers: s.sk, payload: { team, by: 'seed' } })).statusCode).toBe(201);
    const http = await env.app.inject({
      method: 'POST', url: `/api/projects/${s.id}/functions`, headers: s.owner.auth,
      payload: { name: 'mine', kind: 'http', source: `export default async (req, plinth) => {
        const { items } = await plinth.data.collection('notes').list();
        return { caller: plinth.caller, teams: items.map((n) => n.team) };
      }` },
    });
    expect(http.statusCode, http.body).toBe(201);
    const before = await env.app.inject({
      method: 'POST', url: `/api/projects/${s.id}/functions`, headers: s.owner.auth,
      payload: { name: 'stamp', kind: 'before', trigger: { collection: 'notes', events: ['create'] }, source: `export default ({ data }, plinth) => ({ data: { ...data, by: JSON.stringify(plinth.caller.claims) } })` },
    });
    expect(before.statusCode, before.body).toBe(201);
  });

  it('an HTTP function sees the caller’s claims, and its own reads as the caller are judged with them', async () => {
    const blue = await signup(env, s, { plan: 'blue' });
    const none = await signup(env, s);
    const call = (token?: string) => env.app.inject({ method: 'GET', url: '/api/functions/mine', headers: { ...s.pk, ...(token ? { authorization: `Bearer ${token}` } : {}) } });
    const asBlue = await call(blue.body.data.accessToken);
    expect(asBlue.statusCode, asBlue.body).toBe(200);
    expect(asBlue.json()).toEqual({ caller: { userId: blue.body.data.user._id, keyKind: 'publishable', claims: { team: 'blue' } }, teams: ['blue'] });
    const asNone = await call(none.body.data.accessToken);
    expect(asNone.json()).toEqual({ caller: { userId: none.body.data.user._id, keyKind: 'publishable', claims: null }, teams: [] });
    const forged = blue.body.data.accessToken.split('.');
    forged[1] = Buffer.from(JSON.stringify({ ...decodeJwt(blue.body.data.accessToken), claims: { team: 'red' } })).toString('base64url');
    expect((await call(forged.join('.'))).json()).toEqual({ caller: { userId: null, keyKind: 'publishable', claims: null }, teams: [] });
  });

  it('a before-hook of a write by a token with claims sees them in plinth.caller', async () => {
    const blue = await signup(env, s, { plan: 'blue' });
    const res = await env.app.inject({ method: 'POST', url: '/api/data/notes', headers: { ...s.pk, authorization: `Bearer ${blue.body.data.accessToken}` }, payload: { team: 'blue' } });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().by).toBe('{"team":"blue"}');
  });
});

describe('deploying', () => {
  it('the publishable key cannot deploy or list anything: the dashboard only', async () => {
    const res = await deploy(p, 'sneaky', 'token-claims', 'export default () => ({ claims: { admin: true } })', p.pk);
    expect([401, 403]).toContain(res.statusCode);
    const list = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/functions`, headers: p.pk });
    expect([401, 403]).toContain(list.statusCode);
    const bearerUser = await signup(env, p);
    const asUser = await deploy(p, 'sneaky', 'token-claims', 'export default () => 1', { ...p.pk, authorization: `Bearer ${bearerUser.body.data.accessToken}` });
    expect([401, 403]).toContain(asUser.statusCode);
  });

  it('a second hook for the same event is refused', async () => {
    const res = await deploy(p, 'gate2', 'before-sign-up', 'export default () => {}');
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('function_trigger_invalid');
  });
});
