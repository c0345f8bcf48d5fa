/**
 * Threat: a member doing more than their role allows (a viewer rotating the secret key, a
 * developer inviting people), or seeing a secret. Table-driven: representative routes of every
 * area of the dashboard, each called by a member of each role; the expected least role is
 * written here by hand (from docs/teams.md), not read from the permission table, so a wrong
 * entry in the table fails. Also: the docs' matrix is the table's; a viewer's GET responses
 * never carry a secret; a non-member sees no project of others.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeOperator, makeProject, USERS_FIELDS, type TestOperator, type TestProject } from '../../helpers/fixtures.js';
import { routeTableOf } from '../../../src/plugins/route-table.js';
import { PERMISSIONS } from '../../../src/modules/members/permissions.js';
import { ROLES, type Role } from '../../../src/modules/members/roles.js';
import { addMember } from './helpers.js';

let env: TestEnv;
let p: TestProject;
const as: Record<Role, TestOperator> = {} as Record<Role, TestOperator>;
let docId: string;
let webhookSecret: string;
const FUNCTION_SECRET = 'fn-secret-value-5f2d9c';
const MAIL_KEY = 're_mail_key_secret_9a8b7c';
const GITHUB_SECRET = 'github-client-secret-77aa';

beforeAll(async () => {
  env = await createTestEnv({ RATE_LIMIT_SCALE: '100' });
  p = await makeProject(env.ctx);
  as.owner = p.owner;
  as.admin = await addMember(env, p.id, 'admin', p.owner.id);
  as.developer = await addMember(env, p.id, 'developer', p.owner.id);
  as.viewer = await addMember(env, p.id, 'viewer', p.owner.id);
  const inject = (method: string, url: string, payload?: object) => env.app.inject({ method: method as 'GET', url: `/api/projects/${p.id}${url}`, headers: p.owner.auth, payload });
  expect((await inject('POST', '/collections', { name: 'posts', schema: [{ key: 'title', type: 'String' }] })).statusCode).toBe(201);
  expect((await inject('PATCH', '/collections/posts/realtime', { enabled: true })).statusCode).toBe(200);
  expect((await inject('POST', '/collections', { name: 'users', schema: USERS_FIELDS })).statusCode).toBe(201);
  const doc = await inject('POST', '/data/posts', { title: 'hello' });
  expect(doc.statusCode).toBe(201);
  docId = doc.json().data._id;
  const hook = await inject('POST', '/webhooks', { url: 'https://hooks.example.com/in' });
  expect(hook.statusCode).toBe(201);
  webhookSecret = hook.json().data.secret;
  expect((await inject('PUT', '/function-secrets/API_TOKEN', { value: FUNCTION_SECRET })).statusCode).toBe(200);
  expect((await inject('PATCH', '', { providerApiKey: MAIL_KEY })).statusCode).toBe(200);
  expect((await inject('PATCH', '/auth/providers', { github: { enabled: true, clientId: 'gh-client', clientSecret: GITHUB_SECRET } })).statusCode).toBe(200);
}, 60_000);
afterAll(() => env.close());

type Row = { method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'; url: string; least: Role; body?: (role: Role) => object };

// Representative routes of every area, with the least role docs/teams.md gives them.
const ROUTES: Row[] = [
  // project, settings, keys
  { method: 'GET', url: '', least: 'viewer' },
  { method: 'GET', url: '/usage', least: 'viewer' },
  { method: 'PATCH', url: '', least: 'admin', body: (r) => ({ description: `changed by ${r}` }) },
  { method: 'POST', url: '/api-key', least: 'admin', body: () => ({ keyType: 'publishable' }) },
  { method: 'PATCH', url: '/auth/providers', least: 'admin', body: () => ({ google: { enabled: false } }) },
  { method: 'GET', url: '/auth/oidc', least: 'viewer' },
  // schemas and rules
  { method: 'GET', url: '/collections', least: 'viewer' },
  { method: 'GET', url: '/collections/posts', least: 'viewer' },
  { method: 'POST', url: '/collections', least: 'developer', body: (r) => ({ name: `by_${r}`, schema: [{ key: 'n', type: 'Number' }] }) },
  { method: 'GET', url: '/collections/posts/rules', least: 'viewer' },
  // data
  { method: 'GET', url: '/data/posts', least: 'viewer' },
  { method: 'POST', url: '/data/posts', least: 'developer', body: (r) => ({ title: `by ${r}` }) },
  { method: 'PATCH', url: '/data/posts/:doc', least: 'developer', body: (r) => ({ title: `edited by ${r}` }) },
  // end users
  { method: 'GET', url: '/users', least: 'viewer' },
  { method: 'POST', url: '/users', least: 'developer', body: (r) => ({ email: `user-${r}@example.com`, password: 'long enough pw' }) },
  // storage
  { method: 'GET', url: '/files', least: 'viewer' },
  { method: 'GET', url: '/storage', least: 'viewer' },
  // mail
  { method: 'GET', url: '/mail/logs', least: 'viewer' },
  { method: 'GET', url: '/mail/templates', least: 'viewer' },
  { method: 'GET', url: '/mail/outbox', least: 'developer' },
  { method: 'POST', url: '/mail/templates', least: 'developer', body: (r) => ({ name: `tpl-${r}`, subject: 'Hi', html: '<p>Hi</p>' }) },
  { method: 'PUT', url: '/mail/webhook-secret', least: 'admin', body: () => ({ secret: 'whsec_' + 'a'.repeat(32) }) },
  // webhooks
  { method: 'GET', url: '/webhooks', least: 'viewer' },
  { method: 'POST', url: '/webhooks', least: 'developer', body: (r) => ({ url: `https://hooks.example.com/${r}` }) },
  // functions and their secrets
  { method: 'GET', url: '/functions', least: 'viewer' },
  { method: 'GET', url: '/function-secrets', least: 'viewer' },
  { method: 'PUT', url: '/function-secrets/OTHER', least: 'admin', body: () => ({ value: 'x' }) },
  // logs, database insight, audit
  { method: 'GET', url: '/logs/requests', least: 'viewer' },
  { method: 'GET', url: '/database/tables', least: 'viewer' },
  { method: 'GET', url: '/audit', least: 'viewer' },
  { method: 'GET', url: '/audit/verify', least: 'viewer' },
  // backups
  { method: 'GET', url: '/export', least: 'admin' },
  // realtime (the console's live records)
  { method: 'POST', url: '/realtime/ticket', least: 'viewer', body: () => ({ subscriptions: [{ collection: 'posts' }] }) },
  // members
  { method: 'GET', url: '/members', least: 'viewer' },
  { method: 'GET', url: '/members/invitations', least: 'admin' },
  { method: 'POST', url: '/members/invitations', least: 'admin', body: (r) => ({ email: `invitee-${r}@example.com`, role: 'viewer' }) },
  { method: 'GET', url: '/transfer', least: 'viewer' },
];

const rank = (r: Role) => ROLES.indexOf(r);

function call(row: Row, role: Role) {
  return env.app.inject({
    method: row.method,
    url: `/api/projects/${p.id}${row.url.replace(':doc', docId)}`,
    headers: as[role].auth,
    ...(row.body ? { payload: row.body(role) } : {}),
  });
}

describe('role × route', () => {
  for (const row of ROUTES) {
    it(`${row.method} ${row.url || '/'}: ${row.least} and above`, async () => {
      for (const role of ROLES) {
        const res = await call(row, role);
        if (rank(role) < rank(row.least)) {
          expect({ role, status: res.statusCode, code: res.json().code }).toEqual({ role, status: 403, code: 'project_role_forbidden' });
          expect(res.json().message).toContain(`needs the ${row.least} role`);
          expect(res.json().message).toContain(`your role is ${role}`);
        } else {
          expect({ role, status: res.statusCode, body: res.statusCode < 300 ? 'ok' : res.body }).toEqual({ role, status: res.statusCode < 300 ? res.statusCode : 200, body: 'ok' });
        }
      }
    });
  }

  it('only the owner may delete the project', async () => {
    for (const role of ['viewer', 'developer', 'admin'] as const) {
      const res = await env.app.inject({ method: 'DELETE', url: `/api/projects/${p.id}`, headers: as[role].auth });
      expect(res.statusCode).toBe(403);
      expect(res.json().message).toContain('needs the owner role');
    }
    const other = await makeProject(env.ctx);
    const admin = await addMember(env, other.id, 'admin', other.owner.id);
    expect((await env.app.inject({ method: 'DELETE', url: `/api/projects/${other.id}`, headers: admin.auth })).statusCode).toBe(403);
    expect((await env.app.inject({ method: 'DELETE', url: `/api/projects/${other.id}`, headers: other.owner.auth })).statusCode).toBe(200);
  });

  it('someone who is no member gets 404 on every route, as for a project that does not exist', async () => {
    const stranger = await makeOperator(env.ctx);
    for (const row of ROUTES) {
      const res = await env.app.inject({ method: row.method, url: `/api/projects/${p.id}${row.url.replace(':doc', docId)}`, headers: stranger.auth, ...(row.body ? { payload: row.body('viewer') } : {}) });
      expect({ at: `${row.method} ${row.url}`, status: res.statusCode, code: res.json().code }).toEqual({ at: `${row.method} ${row.url}`, status: 404, code: 'project_not_found' });
    }
  });

  it("the projects list shows the projects I am a member of, with my role, and no others", async () => {
    const mine = await env.app.inject({ method: 'GET', url: '/api/projects', headers: as.developer.auth });
    expect(mine.json().data.map((x: { _id: string; role: string }) => [x._id, x.role])).toEqual([[p.id, 'developer']]);
    const one = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}`, headers: as.viewer.auth });
    expect(one.json().data.role).toBe('viewer');
    const owner = await env.app.inject({ method: 'GET', url: '/api/projects', headers: p.owner.auth });
    expect(owner.json().data.find((x: { _id: string }) => x._id === p.id).role).toBe('owner');
  });
});

describe('secrets', () => {
  it("no GET a viewer may call answers with any of the project's secrets", async () => {
    const rotated = await env.app.inject({ method: 'POST', url: `/api/projects/${p.id}/api-key`, headers: p.owner.auth, payload: { keyType: 'secret' } });
    const secretKey = rotated.json().data.apiKey as string;
    expect(secretKey).toMatch(/^sk_/);
    const secrets = [secretKey, p.secretKey, webhookSecret, FUNCTION_SECRET, MAIL_KEY, GITHUB_SECRET];
    const values: Record<string, string> = { collectionName: 'posts', name: 'posts', id: docId, format: 'json', endpointId: '0'.repeat(24), userId: '0'.repeat(24), templateId: '0'.repeat(24), audienceId: '0'.repeat(24), providerId: 'x', version: '1' };
    const gets = [...routeTableOf(env.app).values()]
      .filter((e) => e.url.startsWith('/api/projects/:projectId') && e.methods.has('GET'))
      .map((e) => e.url);
    expect(gets.length).toBeGreaterThan(40);
    let answered = 0;
    for (const url of gets) {
      const path = url.replace(/:(\w+)/g, (_, k: string) => (k === 'projectId' ? p.id : values[k] ?? 'x'));
      const res = await env.app.inject({ method: 'GET', url: path, headers: as.viewer.auth });
      if (res.statusCode === 200) answered++;
      for (const s of secrets) expect({ url, leaked: res.body.includes(s) }).toEqual({ url, leaked: false });
    }
    expect(answered).toBeGreaterThan(25);
    // The same key as the owner just received it: the scan would have found it.
    expect(rotated.body).toContain(secretKey);
  }, 60_000);

  it('a viewer is refused the backup export and the dev outbox, which carry secrets and one-time codes', async () => {
    for (const url of ['/export', '/mail/outbox']) {
      const res = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}${url}`, headers: as.viewer.auth });
      expect(res.statusCode).toBe(403);
    }
  });
});

describe('docs/teams.md', () => {
  it("its matrix is the permission table's, row for row", () => {
    const doc = readFileSync(new URL('../../../docs/teams.md', import.meta.url), 'utf8');
    const rows = [...doc.matchAll(/^\| `([A-Z]+ [^`]+)` \| (viewer|developer|admin|owner) \|/gm)].map((m) => [m[1], m[2]]);
    const table = Object.entries(PERMISSIONS).filter(([, d]) => 'role' in d).map(([k, d]) => [k, (d as { role: string }).role]);
    expect(rows).toEqual(table);
  });
});
