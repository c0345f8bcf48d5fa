/**
 * Teams (docs/teams.md) as operators live them: an invitation's life and its threats (another
 * address, a used, expired or revoked link, an unverified account, the limits), role changes and
 * removal taking effect on the next request and closing the console's open streams, leaving,
 * ownership transfer, deleting one's own account, another project's members never visible, two
 * operators editing at once, and the audit log naming who did each.
 */
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeOperator, makeProject, type TestOperator, type TestProject } from '../../helpers/fixtures.js';
import { sha256Hex } from '../../../src/lib/crypto.js';
import { signOperatorToken } from '../../../src/modules/operators/tokens.js';
import { openStream } from '../realtime/sse.js';
import { freshIp } from '../operators/helpers.js';
import { addMember, invitationToken } from './helpers.js';

let env: TestEnv;
let base: string;

beforeAll(async () => {
  env = await createTestEnv({ RATE_LIMIT_SCALE: '100', REALTIME_POLL_MS: '20' });
  await env.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(env.app.server.address() as AddressInfo).port}`;
}, 60_000);
afterAll(() => env.close());

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
const api = (method: Method, url: string, who: { auth: Record<string, string> } | null, payload?: object) =>
  env.app.inject({ method, url, headers: who?.auth ?? {}, ...(payload ? { payload } : {}) });
const P = (p: TestProject | string) => `/api/projects/${typeof p === 'string' ? p : p.id}`;

async function invite(p: TestProject, by: TestOperator, email: string, role = 'developer') {
  const res = await api('POST', `${P(p)}/members/invitations`, by, { email, role });
  expect(res.statusCode, res.body).toBe(201);
  return { res, token: await invitationToken(env, email) };
}

/** Signs up through the console's own route (verification is off without a mail provider) and signs in. */
async function signUp(email: string): Promise<TestOperator> {
  const reg = await env.app.inject({ method: 'POST', url: '/api/auth/register', remoteAddress: freshIp(), payload: { email, password: 'long enough pw', name: 'New' } });
  expect(reg.statusCode, reg.body).toBe(201);
  const login = await env.app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: freshIp(), payload: { email, password: 'long enough pw' } });
  const token = login.json().accessToken ?? login.json().data?.accessToken ?? login.json().token;
  expect(token, login.body).toBeTruthy();
  return { id: reg.json().data?._id ?? reg.json().user?._id, email, password: 'long enough pw', plan: 'free', token, auth: { authorization: `Bearer ${token}` } };
}

/** Moves the clock, with access tokens signed at the new time (they last 15 minutes). */
async function travel(ms: number, ...ops: TestOperator[]): Promise<void> {
  env.clock.advance(ms);
  for (const op of ops) {
    op.token = await signOperatorToken(env.ctx.config.dashboardJwtSecret, op.id, env.clock.now());
    op.auth = { authorization: `Bearer ${op.token}` };
  }
}

async function auditActions(p: TestProject) {
  const res = await api('GET', `${P(p)}/audit?limit=100`, p.owner);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data.items as Array<{ action: string; operator: { email: string | null }; target: string | null }>;
}

describe('invitations', () => {
  it('an invited address signs up from the link and joins with the invited role; the link works once', async () => {
    const p = await makeProject(env.ctx);
    const email = `new-${Date.now()}@example.com`;
    const { token, res } = await invite(p, p.owner, email, 'developer');
    expect(res.json().data).toMatchObject({ email, role: 'developer', invitedBy: p.owner.email });
    // Stored as its hash only.
    const row = await env.ctx.db.admin.selectFrom('project_invitations').selectAll().where('email', '=', email).executeTakeFirstOrThrow();
    expect(row.token_hash).toBe(sha256Hex(token));
    expect(JSON.stringify(row)).not.toContain(token);

    const pending = await api('GET', `${P(p)}/members/invitations`, p.owner);
    expect(pending.json().data.map((i: { email: string }) => i.email)).toEqual([email]);

    const look = await api('POST', '/api/invitations/lookup', null, { token });
    expect(look.statusCode).toBe(200);
    expect(look.json().data).toMatchObject({ projectName: 'Test project', email, role: 'developer', accountExists: false });

    const op = await signUp(email);
    const accepted = await api('POST', '/api/invitations/accept', op, { token });
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json().data).toMatchObject({ _id: p.id, role: 'developer' });

    const list = await api('GET', '/api/projects', op);
    expect(list.json().data.map((x: { _id: string; role: string }) => [x._id, x.role])).toEqual([[p.id, 'developer']]);
    expect((await api('POST', `${P(p)}/data/none`, op, {})).json().code).not.toBe('project_role_forbidden');

    const again = await api('POST', '/api/invitations/accept', op, { token });
    expect([again.statusCode, again.json().code]).toEqual([400, 'invitation_invalid']);
    expect((await api('GET', `${P(p)}/members/invitations`, p.owner)).json().data).toEqual([]);
    const members = await api('GET', `${P(p)}/members`, p.owner);
    expect(members.json().data.map((m: { email: string; role: string }) => [m.email, m.role])).toEqual([[p.owner.email, 'owner'], [email, 'developer']]);
    expect((await auditActions(p)).map((e) => e.action)).toEqual(expect.arrayContaining(['members.invite', 'members.join']));
  });

  it('another signed-in address cannot use the link; the invited one still can', async () => {
    const p = await makeProject(env.ctx);
    const invited = await makeOperator(env.ctx);
    const other = await makeOperator(env.ctx);
    const { token } = await invite(p, p.owner, invited.email, 'viewer');
    const wrong = await api('POST', '/api/invitations/accept', other, { token });
    expect([wrong.statusCode, wrong.json().code]).toEqual([403, 'invitation_email_mismatch']);
    expect((await api('GET', P(p), other)).statusCode).toBe(404);
    expect((await api('POST', '/api/invitations/accept', invited, { token })).statusCode).toBe(200);
    expect((await api('GET', P(p), invited)).json().data.role).toBe('viewer');
  });

  it('an unverified account with the invited address must verify first', async () => {
    const p = await makeProject(env.ctx);
    const invited = await makeOperator(env.ctx);
    await env.ctx.db.admin.updateTable('operators').set({ is_verified: false }).where('id', '=', invited.id).execute();
    const { token } = await invite(p, p.owner, invited.email);
    const res = await api('POST', '/api/invitations/accept', invited, { token });
    expect([res.statusCode, res.json().code]).toEqual([403, 'invitation_email_unverified']);
  });

  it('expires after 7 days', async () => {
    const p = await makeProject(env.ctx);
    const invited = await makeOperator(env.ctx);
    const { token } = await invite(p, p.owner, invited.email);
    await travel(7 * 24 * 3600 * 1000 + 1000, invited, p.owner);
    try {
      const look = await api('POST', '/api/invitations/lookup', null, { token });
      expect([look.statusCode, look.json().code]).toEqual([410, 'invitation_expired']);
      const res = await api('POST', '/api/invitations/accept', invited, { token });
      expect([res.statusCode, res.json().code]).toEqual([410, 'invitation_expired']);
      expect((await api('GET', `${P(p)}/members/invitations`, p.owner)).json().data).toEqual([]);
    } finally {
      await travel(-(7 * 24 * 3600 * 1000 + 1000), invited, p.owner);
    }
  });

  it('a revoked invitation opens nothing; an unknown token neither', async () => {
    const p = await makeProject(env.ctx);
    const invited = await makeOperator(env.ctx);
    const { token, res } = await invite(p, p.owner, invited.email);
    const revoke = await api('DELETE', `${P(p)}/members/invitations/${res.json().data._id}`, p.owner);
    expect(revoke.statusCode).toBe(200);
    expect((await api('DELETE', `${P(p)}/members/invitations/${res.json().data._id}`, p.owner)).json().code).toBe('invitation_not_found');
    const accept = await api('POST', '/api/invitations/accept', invited, { token });
    expect([accept.statusCode, accept.json().code]).toEqual([400, 'invitation_invalid']);
    const unknown = await api('POST', '/api/invitations/accept', invited, { token: 'x'.repeat(43) });
    expect(unknown.json().code).toBe('invitation_invalid');
    expect((await api('GET', P(p), invited)).statusCode).toBe(404);
    expect((await auditActions(p)).map((e) => e.action)).toContain('members.revoke_invitation');
  });

  it('never as owner, never above the inviter, never an existing member', async () => {
    const p = await makeProject(env.ctx);
    const admin = await addMember(env, p.id, 'admin', p.owner.id);
    expect((await api('POST', `${P(p)}/members/invitations`, admin, { email: 'x@example.com', role: 'owner' })).statusCode).toBe(400);
    const dup = await api('POST', `${P(p)}/members/invitations`, admin, { email: p.owner.email, role: 'viewer' });
    expect([dup.statusCode, dup.json().code]).toEqual([409, 'member_exists']);
    const dev = await addMember(env, p.id, 'developer', p.owner.id);
    const byDev = await api('POST', `${P(p)}/members/invitations`, dev, { email: 'y@example.com', role: 'viewer' });
    expect([byDev.statusCode, byDev.json().code]).toEqual([403, 'project_role_forbidden']);
    expect((await api('POST', `${P(p)}/members/invitations`, admin, { email: 'z@example.com', role: 'admin' })).statusCode).toBe(201);
  });

  it('limits: 50 members and open invitations per project; 20 invitations per operator per hour', async () => {
    const p = await makeProject(env.ctx);
    for (let i = 0; i < 48; i++) await addMember(env, p.id, 'viewer', p.owner.id);
    expect((await api('POST', `${P(p)}/members/invitations`, p.owner, { email: 'fiftieth@example.com', role: 'viewer' })).statusCode).toBe(201);
    const full = await api('POST', `${P(p)}/members/invitations`, p.owner, { email: 'one-too-many@example.com', role: 'viewer' });
    expect([full.statusCode, full.json().code]).toEqual([409, 'member_limit_reached']);
    expect(full.json().message).toContain('50');

    const q = await makeProject(env.ctx);
    for (let i = 0; i < 20; i++) expect((await api('POST', `${P(q)}/members/invitations`, q.owner, { email: `r${i}@example.com`, role: 'viewer' })).statusCode).toBe(201);
    const limited = await api('POST', `${P(q)}/members/invitations`, q.owner, { email: 'r20@example.com', role: 'viewer' });
    expect([limited.statusCode, limited.json().code]).toEqual([429, 'invitation_rate_limited']);
    expect(limited.headers['retry-after']).toBeDefined();
    await travel(3601_000, q.owner);
    try {
      expect((await api('POST', `${P(q)}/members/invitations`, q.owner, { email: 'r20@example.com', role: 'viewer' })).statusCode).toBe(201);
    } finally {
      await travel(-3601_000, q.owner);
    }
  }, 60_000);
});

describe('roles change and members go, from the next request', () => {
  it("lowering a developer to viewer stops their writes at once; the owner's role is untouchable", async () => {
    const p = await makeProject(env.ctx);
    await api('POST', `${P(p)}/collections`, p.owner, { name: 'notes', schema: [{ key: 't', type: 'String' }] });
    const admin = await addMember(env, p.id, 'admin', p.owner.id);
    const dev = await addMember(env, p.id, 'developer', p.owner.id);
    expect((await api('POST', `${P(p)}/data/notes`, dev, { t: 'a' })).statusCode).toBe(201);
    const lowered = await api('PATCH', `${P(p)}/members/${dev.id}`, admin, { role: 'viewer' });
    expect(lowered.statusCode, lowered.body).toBe(200);
    expect(lowered.json().data).toMatchObject({ operatorId: dev.id, role: 'viewer' });
    const refused = await api('POST', `${P(p)}/data/notes`, dev, { t: 'b' });
    expect([refused.statusCode, refused.json().code]).toEqual([403, 'project_role_forbidden']);
    expect((await api('GET', `${P(p)}/data/notes`, dev)).statusCode).toBe(200);

    const owner = await api('PATCH', `${P(p)}/members/${p.owner.id}`, admin, { role: 'viewer' });
    expect([owner.statusCode, owner.json().code]).toEqual([403, 'member_is_owner']);
    expect((await api('PATCH', `${P(p)}/members/${dev.id}`, admin, { role: 'owner' })).statusCode).toBe(400);
    const byDev = await api('PATCH', `${P(p)}/members/${admin.id}`, dev, { role: 'viewer' });
    expect(byDev.json().code).toBe('project_role_forbidden');
    const entries = await auditActions(p);
    const change = entries.find((e) => e.action === 'members.role_change');
    expect(change?.target).toBe(dev.id);
  });

  it('a removed member is refused on the next request, and their open console stream ends', async () => {
    const p = await makeProject(env.ctx);
    await api('POST', `${P(p)}/collections`, p.owner, { name: 'posts', realtime: true, schema: [{ key: 'title', type: 'String' }] });
    const admin = await addMember(env, p.id, 'admin', p.owner.id);
    const viewer = await addMember(env, p.id, 'viewer', p.owner.id);
    const ticket = await api('POST', `${P(p)}/realtime/ticket`, viewer, { subscriptions: [{ collection: 'posts' }] });
    expect(ticket.statusCode, ticket.body).toBe(200);
    const s = await openStream(`${base}/api/realtime?ticket=${encodeURIComponent(ticket.json().data.ticket)}`);
    try {
      await s.waitFor((e) => e.event === 'ready');
      const ownerTicket = await api('POST', `${P(p)}/realtime/ticket`, p.owner, { subscriptions: [{ collection: 'posts' }] });
      const ownerStream = await openStream(`${base}/api/realtime?ticket=${encodeURIComponent(ownerTicket.json().data.ticket)}`);
      await ownerStream.waitFor((e) => e.event === 'ready');

      expect((await api('GET', P(p), viewer)).statusCode).toBe(200);
      const owner = await api('DELETE', `${P(p)}/members/${p.owner.id}`, admin);
      expect([owner.statusCode, owner.json().code]).toEqual([403, 'member_is_owner']);
      expect((await api('DELETE', `${P(p)}/members/${viewer.id}`, admin)).statusCode).toBe(200);

      const after = await api('GET', P(p), viewer);
      expect([after.statusCode, after.json().code]).toEqual([404, 'project_not_found']);
      expect((await api('GET', '/api/projects', viewer)).json().data).toEqual([]);
      const revoked = await s.waitFor((e) => e.event === 'revoked', 3000);
      expect(revoked.data).toMatchObject({ reason: expect.stringContaining('ended') });
      await s.closed;
      // The ticket they still hold opens nothing now.
      const reopen = await openStream(`${base}/api/realtime?ticket=${encodeURIComponent(ticket.json().data.ticket)}`);
      expect(reopen.status).toBe(401);
      // The owner's stream goes on.
      await api('POST', `${P(p)}/data/posts`, p.owner, { title: 'still here' });
      await ownerStream.waitFor((e) => e.event === 'create');
      ownerStream.close();
      expect((await auditActions(p)).map((e) => e.action)).toContain('members.remove');
    } finally {
      s.close();
    }
  });

  it('a member leaves; the owner cannot', async () => {
    const p = await makeProject(env.ctx);
    const dev = await addMember(env, p.id, 'developer', p.owner.id);
    expect((await api('POST', `${P(p)}/members/leave`, dev)).statusCode).toBe(200);
    expect((await api('GET', P(p), dev)).statusCode).toBe(404);
    const owner = await api('POST', `${P(p)}/members/leave`, p.owner);
    expect([owner.statusCode, owner.json().code]).toEqual([409, 'owner_cannot_leave']);
    expect((await auditActions(p)).map((e) => e.action)).toContain('members.leave');
  });

  it("another project's members are never visible, nor changeable through my project", async () => {
    const a = await makeProject(env.ctx);
    const b = await makeProject(env.ctx);
    const bDev = await addMember(env, b.id, 'developer', b.owner.id);
    expect((await api('GET', `${P(b)}/members`, a.owner)).statusCode).toBe(404);
    const viaMine = await api('DELETE', `${P(a)}/members/${bDev.id}`, a.owner);
    expect([viaMine.statusCode, viaMine.json().code]).toEqual([404, 'member_not_found']);
    const mine = await api('GET', `${P(a)}/members`, a.owner);
    expect(mine.json().data.map((m: { operatorId: string }) => m.operatorId)).toEqual([a.owner.id]);
    expect((await api('GET', P(b), bDev)).statusCode).toBe(200);
  });
});

describe('ownership transfer', () => {
  it('goes to an admin once they accept: they own it, the previous owner becomes an admin', async () => {
    const p = await makeProject(env.ctx);
    const admin = await addMember(env, p.id, 'admin', p.owner.id);
    const dev = await addMember(env, p.id, 'developer', p.owner.id);
    const toDev = await api('POST', `${P(p)}/transfer`, p.owner, { operatorId: dev.id });
    expect([toDev.statusCode, toDev.json().code]).toEqual([400, 'transfer_target_invalid']);
    const byAdmin = await api('POST', `${P(p)}/transfer`, admin, { operatorId: admin.id });
    expect(byAdmin.json().code).toBe('project_role_forbidden');

    const offer = await api('POST', `${P(p)}/transfer`, p.owner, { operatorId: admin.id });
    expect(offer.statusCode, offer.body).toBe(200);
    expect((await api('GET', `${P(p)}/transfer`, dev)).json().data).toMatchObject({ toOperatorId: admin.id, toEmail: admin.email });
    // Nothing changed yet.
    expect((await api('GET', P(p), admin)).json().data.role).toBe('admin');
    const notForDev = await api('POST', `${P(p)}/transfer/accept`, dev);
    expect(notForDev.statusCode).toBe(403);

    const accept = await api('POST', `${P(p)}/transfer/accept`, admin);
    expect(accept.statusCode, accept.body).toBe(200);
    expect((await api('GET', P(p), admin)).json().data).toMatchObject({ role: 'owner', owner: admin.id });
    expect((await api('GET', P(p), p.owner)).json().data.role).toBe('admin');
    expect((await api('DELETE', P(p), p.owner)).statusCode).toBe(403);
    expect((await api('GET', `${P(p)}/transfer`, admin)).json().data).toBeNull();
    expect((await auditActions({ ...p, owner: admin })).map((e) => e.action)).toEqual(expect.arrayContaining(['project.transfer_offer', 'project.transfer_accept']));
  });

  it('the offer can be withdrawn by the owner or declined by the admin, and expires', async () => {
    const p = await makeProject(env.ctx);
    const admin = await addMember(env, p.id, 'admin', p.owner.id);
    await api('POST', `${P(p)}/transfer`, p.owner, { operatorId: admin.id });
    expect((await api('DELETE', `${P(p)}/transfer`, admin)).statusCode).toBe(200);
    expect((await api('POST', `${P(p)}/transfer/accept`, admin)).json().code).toBe('transfer_not_found');
    await api('POST', `${P(p)}/transfer`, p.owner, { operatorId: admin.id });
    await travel(8 * 24 * 3600 * 1000, admin);
    try {
      const late = await api('POST', `${P(p)}/transfer/accept`, admin);
      expect([late.statusCode, late.json().code]).toEqual([410, 'transfer_expired']);
    } finally {
      await travel(-8 * 24 * 3600 * 1000, admin);
    }
  });
});

describe('deleting my own account', () => {
  it('is refused while I own projects, with their list; otherwise my memberships and sessions end', async () => {
    const p = await makeProject(env.ctx, undefined, 'Owned one');
    const refused = await api('DELETE', '/api/auth/me', p.owner, { password: p.owner.password });
    expect([refused.statusCode, refused.json().code]).toEqual([409, 'owns_projects']);
    expect(refused.json().projects).toEqual([{ _id: p.id, name: 'Owned one' }]);
    expect(refused.json().message).toContain('Owned one');

    const dev = await addMember(env, p.id, 'developer', p.owner.id);
    const wrong = await api('DELETE', '/api/auth/me', dev, { password: 'not it' });
    expect(wrong.statusCode).toBe(400);
    const gone = await api('DELETE', '/api/auth/me', dev, { password: dev.password });
    expect(gone.statusCode, gone.body).toBe(200);
    expect((await api('GET', '/api/auth/me', dev)).statusCode).toBe(401);
    const members = await api('GET', `${P(p)}/members`, p.owner);
    expect(members.json().data.map((m: { operatorId: string }) => m.operatorId)).toEqual([p.owner.id]);
    const entry = (await auditActions(p)).find((e) => e.action === 'operator.delete');
    expect(entry?.target).toBe(dev.email);
  });
});

describe('two operators at once', () => {
  it('two admins inviting the same address at once leave one open invitation; two members editing a schema at once both land, each under their own name', async () => {
    const p = await makeProject(env.ctx);
    const a1 = await addMember(env, p.id, 'admin', p.owner.id);
    const a2 = await addMember(env, p.id, 'admin', p.owner.id);
    const [r1, r2] = await Promise.all([
      api('POST', `${P(p)}/members/invitations`, a1, { email: 'both@example.com', role: 'viewer' }),
      api('POST', `${P(p)}/members/invitations`, a2, { email: 'both@example.com', role: 'developer' }),
    ]);
    expect([r1.statusCode, r2.statusCode]).toEqual([201, 201]);
    expect((await api('GET', `${P(p)}/members/invitations`, p.owner)).json().data).toHaveLength(1);

    await api('POST', `${P(p)}/collections`, p.owner, { name: 'shared', schema: [{ key: 'a', type: 'String' }] });
    const dev = await addMember(env, p.id, 'developer', p.owner.id);
    const [e1, e2] = await Promise.all([
      api('PATCH', `${P(p)}/collections/shared`, dev, { schema: [{ key: 'a', type: 'String' }, { key: 'b', type: 'String' }] }),
      api('PATCH', `${P(p)}/collections/shared`, a1, { schema: [{ key: 'a', type: 'String' }, { key: 'c', type: 'String' }] }),
    ]);
    expect([e1.statusCode, e2.statusCode].every((s) => s === 200 || s === 409)).toBe(true);
    const entries = (await auditActions(p)).filter((e) => e.action === 'schema.update');
    const who = entries.map((e) => e.operator.email);
    expect(who.length).toBe([e1, e2].filter((r) => r.statusCode === 200).length);
    if (e1.statusCode === 200) expect(who).toContain(dev.email);
    if (e2.statusCode === 200) expect(who).toContain(a1.email);
  });
});

describe("a project's export", () => {
  it("carries nothing of its members' accounts: no member's id, email or role, no invitation", async () => {
    const p = await makeProject(env.ctx);
    const dev = await addMember(env, p.id, 'developer', p.owner.id);
    const admin = await addMember(env, p.id, 'admin', p.owner.id);
    await invite(p, admin, 'pending-invitee@example.com', 'viewer');
    const res = await api('GET', `${P(p)}/export`, p.owner);
    expect(res.statusCode, res.body.slice(0, 200)).toBe(200);
    const text = gunzipSync(res.rawPayload).toString('utf8');
    expect(text.length).toBeGreaterThan(100);
    for (const secret of [dev.id, dev.email, admin.id, admin.email, 'pending-invitee@example.com', p.owner.email]) expect(text).not.toContain(secret);
  });
});
