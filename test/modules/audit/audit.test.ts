/**
 * The audit log of operator changes (docs/audit.md), against a real PostgreSQL: each audited
 * area leaves an entry with who, from where, what and the before/after, and no secret anywhere
 * in the table; a failed request leaves none; concurrent changes keep one chain; a row edited,
 * deleted or inserted directly in SQL is found by the verify route; another project's operator
 * reads nothing; filters, pages and the NDJSON export; the retention trim keeps verify ok; the
 * API role cannot change an entry.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trimAudit } from '../../../src/modules/audit/service.js';
import { buildTaskList, CRONTAB } from '../../../src/worker/tasks.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeOperator, makeProject, USERS_FIELDS, type TestOperator, type TestProject } from '../../helpers/fixtures.js';
import { signOperatorToken } from '../../../src/modules/operators/tokens.js';

let env: TestEnv;
let sqlClient: pg.Client;

interface Entry {
  id: string;
  seq: number;
  at: string;
  operator: { id: string | null; email: string | null };
  ip: string | null;
  action: string;
  target: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  hash: string;
  prevHash: string;
}

const IP = '203.0.113.7';

async function call(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, who: TestOperator, payload?: unknown) {
  const res = await env.app.inject({ method, url, headers: who.auth, remoteAddress: IP, ...(payload !== undefined ? { payload: payload as object } : {}) });
  return { status: res.statusCode, body: res.body && res.headers['content-type']?.toString().includes('json') ? res.json() : undefined, raw: res.body, headers: res.headers };
}

async function entries(p: TestProject, query = ''): Promise<Entry[]> {
  const r = await call('GET', `/api/projects/${p.id}/audit${query}`, p.owner);
  expect(r.status, r.raw).toBe(200);
  return r.body.data.items as Entry[];
}

async function verify(p: TestProject) {
  const r = await call('GET', `/api/projects/${p.id}/audit/verify`, p.owner);
  expect(r.status, r.raw).toBe(200);
  return r.body.data as { ok: boolean; checked: number; head: { seq: number; hash: string }; anchor: { seq: number }; broken: null | { reason: string; id: string | null; seq: number | null; at: string | null } };
}

/** Every audit row of the database as text, for "never in the log" assertions. */
async function allAuditText(): Promise<string> {
  const r = await sqlClient.query('SELECT row_to_json(e)::text AS t FROM audit_entries e');
  return r.rows.map((x: { t: string }) => x.t).join('\n');
}

/** As a database superuser would: triggers off for this statement's session. */
async function tamper(statement: string, params: unknown[] = []) {
  await sqlClient.query("SET session_replication_role = 'replica'");
  try {
    await sqlClient.query(statement, params);
  } finally {
    await sqlClient.query("SET session_replication_role = 'origin'");
  }
}

beforeAll(async () => {
  env = await createTestEnv();
  sqlClient = new pg.Client({ connectionString: env.databaseUrl });
  await sqlClient.connect();
}, 60_000);
afterAll(async () => {
  await sqlClient?.end();
  await env?.close();
});

describe('what is recorded', () => {
  let p: TestProject;
  beforeAll(async () => {
    p = await makeProject(env.ctx);
  });

  it('settings: who, when, from where, the changed members before and after; the mail key is never in the log', async () => {
    const mailKey = 're_SuperSecretMailKey_123456789';
    const r = await call('PATCH', `/api/projects/${p.id}`, p.owner, { name: 'Renamed', providerApiKey: mailKey });
    expect(r.status, r.raw).toBe(200);
    const [e] = await entries(p, '?action=settings.update');
    expect(e).toMatchObject({ action: 'settings.update', ip: IP, operator: { id: p.owner.id, email: p.owner.email } });
    expect(e!.before).toMatchObject({ name: 'Test project', hasProviderApiKey: false });
    expect(e!.after).toMatchObject({ name: 'Renamed', hasProviderApiKey: true });
    expect(Object.keys(e!.after!)).not.toContain('siteUrl'); // unchanged members are left out
    expect(Date.parse(e!.at)).toBe(env.clock.now().getTime());
    expect(await allAuditText()).not.toContain(mailKey);
  });

  it('a failed change leaves no entry', async () => {
    const before = (await entries(p)).length;
    const r = await call('PATCH', `/api/projects/${p.id}`, p.owner, { siteUrl: 'ftp://nope' });
    expect(r.status).toBe(400);
    expect((await entries(p)).length).toBe(before);
  });

  it('keys.rotate names the key kind; neither the old nor the new secret key is anywhere in the log', async () => {
    const r = await call('POST', `/api/projects/${p.id}/api-key`, p.owner, { keyType: 'secret' });
    expect(r.status, r.raw).toBe(200);
    const fresh = r.body.data.apiKey as string;
    const [e] = await entries(p, '?action=keys.rotate');
    expect(e).toMatchObject({ action: 'keys.rotate', target: 'secret' });
    const text = await allAuditText();
    expect(text).not.toContain(fresh);
    expect(text).not.toContain(p.secretKey);
    expect(text).not.toContain(fresh.slice(8, 30));
  });

  it('schemas: create with its fields, update with the fields before and after, rules, delete', async () => {
    const base = `/api/projects/${p.id}/collections`;
    expect((await call('POST', base, p.owner, { name: 'posts', schema: [{ key: 'title', type: 'String' }] })).status).toBe(201);
    expect((await call('PATCH', `${base}/posts`, p.owner, { schema: [{ key: 'title', type: 'String' }, { key: 'views', type: 'Number' }] })).status).toBe(200);
    expect((await call('PATCH', `${base}/posts/rules`, p.owner, { list: 'true' })).status).toBe(200);
    const created = (await entries(p, '?action=schema.create'))[0]!;
    expect(created).toMatchObject({ target: 'posts', after: { name: 'posts' } });
    const updated = (await entries(p, '?action=schema.update'))[0]!;
    expect(updated.target).toBe('posts');
    expect((updated.before!.fields as Array<{ key: string }>).map((f) => f.key)).toEqual(['title']);
    expect((updated.after!.fields as Array<{ key: string }>).map((f) => f.key)).toEqual(['title', 'views']);
    const rules = (await entries(p, '?action=rules.update'))[0]!;
    expect(rules.after!.rules).toMatchObject({ list: 'true' });
    expect((await call('DELETE', `${base}/posts`, p.owner)).status).toBe(200);
    const deleted = (await entries(p, '?action=schema.delete'))[0]!;
    expect(deleted).toMatchObject({ target: 'posts' });
    expect(deleted.after).toBeNull();
    expect(deleted.before).toMatchObject({ name: 'posts' });
  });

  it('functions: deploy, update, delete; a function secret is recorded by name, never its value', async () => {
    const base = `/api/projects/${p.id}/functions`;
    const deployed = await call('POST', base, p.owner, { name: 'hello', kind: 'http', source: 'export default () => new Response("hi")' });
    expect(deployed.status, deployed.raw).toBe(201);
    expect((await call('PATCH', `${base}/hello`, p.owner, { enabled: false })).status).toBe(200);
    const secretValue = 'fn-secret-value-8c1f0e77d2';
    expect((await call('PUT', `/api/projects/${p.id}/function-secrets/STRIPE_KEY`, p.owner, { value: secretValue })).status).toBe(200);
    expect((await call('DELETE', `${base}/hello`, p.owner)).status).toBe(200);
    const fns = await entries(p, '?action=functions.*');
    expect(fns.map((e) => e.action)).toEqual(['functions.delete', 'functions.secret_set', 'functions.update', 'functions.deploy']);
    expect(fns[3]).toMatchObject({ target: 'hello', before: null, after: { name: 'hello', kind: 'http', enabled: true, version: 1 } });
    expect(fns[2]).toMatchObject({ before: { enabled: true }, after: { enabled: false } });
    expect(fns[1]).toMatchObject({ target: 'STRIPE_KEY', after: null });
    expect(await allAuditText()).not.toContain(secretValue);
  });

  it('webhooks and mail: the signing secrets are never in the log', async () => {
    const hook = await call('POST', `/api/projects/${p.id}/webhooks`, p.owner, { url: 'https://hooks.example.com/in' });
    expect(hook.status, hook.raw).toBe(201);
    const signing = hook.body.data.secret as string;
    const endpointId = hook.body.data.endpoint._id as string;
    expect((await call('PATCH', `/api/projects/${p.id}/webhooks/${endpointId}`, p.owner, { enabled: false })).status).toBe(200);
    const mailSecret = 'whsec_MailWebhookSecretValue1234';
    expect((await call('PUT', `/api/projects/${p.id}/mail/webhook-secret`, p.owner, { secret: mailSecret })).status).toBe(200);
    const tpl = await call('POST', `/api/projects/${p.id}/mail/templates`, p.owner, { name: 'Welcome', subject: 'Hi {{name}}', html: '<p>Hi</p>' });
    expect(tpl.status, tpl.raw).toBeLessThan(300);
    const hookUpdate = (await entries(p, '?action=webhooks.update'))[0]!;
    expect(hookUpdate).toMatchObject({ target: endpointId, before: { enabled: true }, after: { enabled: false } });
    expect((await entries(p, '?action=mail.webhook_secret_set'))[0]!.after).toEqual({ secret: '[masked]' });
    expect((await entries(p, '?action=mail.template_create'))[0]).toMatchObject({ target: 'Welcome', after: { subject: 'Hi {{name}}' } });
    const text = await allAuditText();
    expect(text).not.toContain(signing);
    expect(text).not.toContain(mailSecret);
  });

  it('user admin and data: passwords never logged; an operator delete names the document', async () => {
    const password = 'UserPassw0rd-Very-Secret';
    expect((await call('POST', `/api/projects/${p.id}/collections`, p.owner, { name: 'users', schema: USERS_FIELDS })).status).toBe(201);
    const user = await call('POST', `/api/projects/${p.id}/users`, p.owner, { email: 'u1@example.com', password });
    expect(user.status, user.raw).toBe(201);
    const userId = (user.body.data._id ?? user.body.data.user?._id) as string;
    expect((await call('DELETE', `/api/projects/${p.id}/users/${userId}/factors`, p.owner)).status).toBeLessThan(300);
    expect((await call('POST', `/api/projects/${p.id}/collections`, p.owner, { name: 'notes', schema: [] })).status).toBe(201);
    const doc = await call('POST', `/api/projects/${p.id}/data/notes`, p.owner, { text: 'x' });
    expect(doc.status, doc.raw).toBe(201);
    const docId = doc.body.data._id as string;
    expect((await call('DELETE', `/api/projects/${p.id}/data/notes/${docId}?hard=true`, p.owner)).status).toBe(200);
    expect((await entries(p, '?action=users.create'))[0]).toMatchObject({ after: { email: 'u1@example.com', password: '[masked]' } });
    expect((await entries(p, '?action=users.mfa_reset'))[0]).toMatchObject({ target: userId });
    expect((await entries(p, '?action=data.delete'))[0]).toMatchObject({ target: `notes/${docId}`, after: { hard: 'true' } }); // the query string as sent
    const text = await allAuditText();
    expect(text).not.toContain(password);
    expect(text).not.toMatch(/\$argon2/);
  });

  it('exports are recorded', async () => {
    const r = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/export`, headers: p.owner.auth });
    expect(r.statusCode).toBe(200);
    expect((await entries(p, '?action=backup.export'))[0]).toMatchObject({ action: 'backup.export', operator: { id: p.owner.id } });
  });

  it('project create and delete: the first and last entries of the project', async () => {
    const op = await makeOperator(env.ctx);
    const created = await call('POST', '/api/projects', op, { name: 'Short lived' });
    expect(created.status).toBe(201);
    const id = created.body.data._id as string;
    const q = { id, owner: op } as TestProject;
    const [first] = await entries(q);
    expect(first).toMatchObject({ seq: 1, action: 'project.create', after: { name: 'Short lived' } });
    expect(await allAuditText()).not.toContain(created.body.data.secretKey);
    expect((await call('DELETE', `/api/projects/${id}`, op)).status).toBe(200);
    const r = await sqlClient.query('SELECT action, before FROM audit_entries WHERE project_id = $1 ORDER BY seq', [id]);
    expect(r.rows.map((x: { action: string }) => x.action)).toEqual(['project.create', 'project.delete']);
    expect(r.rows[1].before).toMatchObject({ name: 'Short lived' });
  });

  it('the whole project\'s chain verifies', async () => {
    const v = await verify(p);
    expect(v).toMatchObject({ ok: true, broken: null });
    expect(v.checked).toBeGreaterThan(10);
  });
});

describe('the chain', () => {
  async function projectWithEntries(n: number): Promise<TestProject> {
    const p = await makeProject(env.ctx);
    for (let i = 0; i < n; i++) {
      env.clock.advance(1000);
      expect((await call('PATCH', `/api/projects/${p.id}`, p.owner, { description: `v${i}` })).status).toBe(200);
    }
    return p;
  }
  const rowOf = async (p: TestProject, seq: number) =>
    (await sqlClient.query('SELECT id::text, at FROM audit_entries WHERE project_id = $1 AND seq = $2', [p.id, seq])).rows[0] as { id: string; at: Date };

  it('concurrent changes of one project keep one chain: seqs 1..n, each entry linked to the one before', async () => {
    const p = await makeProject(env.ctx);
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => call('PATCH', `/api/projects/${p.id}`, p.owner, { description: `c${i}` })));
    expect(results.map((r) => r.status)).toEqual(Array(12).fill(200));
    const all = await entries(p, '?limit=200');
    expect(all.map((e) => e.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect(await verify(p)).toMatchObject({ ok: true, checked: 12, head: { seq: 12 } });
  });

  it('an entry edited in the database is found: the first broken entry, its id and time', async () => {
    const p = await projectWithEntries(4);
    const row = await rowOf(p, 2);
    await tamper(`UPDATE audit_entries SET after = '{"description":"forged"}' WHERE project_id = $1 AND seq = 2`, [p.id]);
    const v = await verify(p);
    expect(v.ok).toBe(false);
    expect(v.broken).toMatchObject({ reason: 'hash_mismatch', id: row.id, seq: 2, at: row.at.toISOString() });
  });

  it('an entry deleted from the middle is found at the next one', async () => {
    const p = await projectWithEntries(4);
    const next = await rowOf(p, 3);
    await tamper('DELETE FROM audit_entries WHERE project_id = $1 AND seq = 2', [p.id]);
    expect((await verify(p)).broken).toMatchObject({ reason: 'seq_gap', id: next.id, seq: 3 });
  });

  it('the newest entry deleted is found (the head row says where the chain ends)', async () => {
    const p = await projectWithEntries(3);
    await tamper('DELETE FROM audit_entries WHERE project_id = $1 AND seq = 3', [p.id]);
    expect(await verify(p)).toMatchObject({ ok: false, broken: { reason: 'head_mismatch' } });
  });

  it('an entry inserted directly is found, with or without a plausible seq', async () => {
    const p = await projectWithEntries(3);
    const last = await rowOf(p, 3);
    await tamper(
      `INSERT INTO audit_entries (project_id, seq, at, operator_id, operator_email, ip, action, target, before, after, prev_hash, hash)
       VALUES ($1, 4, now(), NULL, 'x@example.com', NULL, 'settings.update', NULL, NULL, NULL, $2, $3)`,
      [p.id, 'f'.repeat(64), 'e'.repeat(64)],
    );
    const inserted = await rowOf(p, 4);
    expect((await verify(p)).broken).toMatchObject({ reason: 'prev_hash_mismatch', id: inserted.id, seq: 4 });
    expect(last).toBeTruthy();
  });

  it('entries are append-only: the API role may not change them, and the owner is refused too', async () => {
    const p = await projectWithEntries(1);
    await sqlClient.query('BEGIN');
    try {
      await sqlClient.query('SET LOCAL ROLE plinth_api_full');
      await expect(sqlClient.query('UPDATE audit_entries SET action = $1', ['x'])).rejects.toThrow(/permission denied/);
    } finally {
      await sqlClient.query('ROLLBACK');
    }
    await expect(sqlClient.query('DELETE FROM audit_entries WHERE project_id = $1', [p.id])).rejects.toThrow(/append-only/);
    await expect(sqlClient.query("UPDATE audit_entries SET action = 'x' WHERE project_id = $1", [p.id])).rejects.toThrow(/append-only/);
    expect((await verify(p)).ok).toBe(true);
  });
});

describe('reading the log', () => {
  let p: TestProject;
  let other: TestProject;
  beforeAll(async () => {
    p = await makeProject(env.ctx);
    other = await makeProject(env.ctx);
    for (const name of ['a', 'b', 'c']) {
      env.clock.advance(60_000);
      expect((await call('POST', `/api/projects/${p.id}/collections`, p.owner, { name, schema: [] })).status).toBe(201);
    }
    env.clock.advance(60_000);
    expect((await call('POST', `/api/projects/${p.id}/api-key`, p.owner, { keyType: 'publishable' })).status).toBe(200);
  });

  it("another project's operator reads nothing of it (404), and the table's policy hides the rows in another tenant scope", async () => {
    for (const path of ['audit', 'audit/verify', 'audit/export']) {
      const r = await call('GET', `/api/projects/${p.id}/${path}`, other.owner);
      expect([path, r.status]).toEqual([path, 404]);
    }
    const seen = await env.ctx.db.read({ projectId: other.id, keyKind: 'operator' }, (db) => db.selectFrom('audit_entries').select('id').where('project_id', '=', p.id).execute());
    expect(seen).toEqual([]);
    const own = await env.ctx.db.read({ projectId: p.id, keyKind: 'operator' }, (db) => db.selectFrom('audit_entries').select('id').where('project_id', '=', p.id).execute());
    expect(own.length).toBe(4);
  });

  it('pages newest first with a cursor, and filters by action, target, operator and time', async () => {
    const page1 = await call('GET', `/api/projects/${p.id}/audit?limit=3`, p.owner);
    expect(page1.body.data.items.map((e: Entry) => e.action)).toEqual(['keys.rotate', 'schema.create', 'schema.create']);
    const cursor = page1.body.data.nextCursor as string;
    expect(cursor).toBeTruthy();
    const page2 = await call('GET', `/api/projects/${p.id}/audit?limit=3&cursor=${cursor}`, p.owner);
    expect(page2.body.data.items.map((e: Entry) => e.target)).toEqual(['a']);
    expect(page2.body.data.nextCursor).toBeNull();
    expect((await entries(p, '?action=schema.create')).map((e) => e.target)).toEqual(['c', 'b', 'a']);
    expect((await entries(p, '?action=schema.*')).length).toBe(3);
    expect((await entries(p, '?target=b')).map((e) => e.action)).toEqual(['schema.create']);
    expect((await entries(p, `?operator=${encodeURIComponent(p.owner.email.toUpperCase())}`)).length).toBe(4);
    expect((await entries(p, `?operator=${other.owner.id}`)).length).toBe(0);
    const all = await entries(p);
    const mid = all[2]!.at; // b's creation
    expect((await entries(p, `?from=${encodeURIComponent(mid)}&to=${encodeURIComponent(all[1]!.at)}`)).map((e) => e.target)).toEqual(['c', 'b']);
  });

  it("a client's mistakes are 400s with stable codes, never 500s", async () => {
    const range = await call('GET', `/api/projects/${p.id}/audit?from=2030-01-02T00:00:00Z&to=2030-01-01T00:00:00Z`, p.owner);
    expect([range.status, range.body.code]).toEqual([400, 'audit_time_range_invalid']);
    expect((await call('GET', `/api/projects/${p.id}/audit?cursor=abc`, p.owner)).status).toBe(400);
    expect((await call('GET', `/api/projects/${p.id}/audit?from=yesterday`, p.owner)).status).toBe(400);
    expect((await call('GET', `/api/projects/${p.id}/audit?action=DROP%20TABLE`, p.owner)).status).toBe(400);
    expect((await call('GET', '/api/projects/nope/audit', p.owner)).status).toBe(400);
  });

  it('exports as NDJSON, streamed: one entry per line, newest first, with the filters', async () => {
    const r = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/audit/export?action=schema.create`, headers: p.owner.auth });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/x-ndjson/);
    expect(r.headers['content-disposition']).toMatch(/attachment; filename="audit-/);
    const lines = r.body.trim().split('\n').map((l) => JSON.parse(l) as Entry);
    expect(lines.map((e) => e.target)).toEqual(['c', 'b', 'a']);
    expect(lines[0]).toMatchObject({ action: 'schema.create', operator: { email: p.owner.email } });
    const full = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/audit/export`, headers: p.owner.auth });
    expect(full.body.trim().split('\n')).toHaveLength(4);
  });
});

describe('retention', () => {
  it('the trim job removes entries older than AUDIT_RETENTION_DAYS and verify still passes from the anchor', async () => {
    expect(CRONTAB).toMatch(/ audit:trim$/m);
    expect(typeof buildTaskList(env.ctx)['audit:trim']).toBe('function');
    const p = await makeProject(env.ctx);
    for (let i = 0; i < 3; i++) expect((await call('PATCH', `/api/projects/${p.id}`, p.owner, { description: `old${i}` })).status).toBe(200);
    env.clock.advance((env.ctx.config.audit.retentionDays + 1) * 86_400_000);
    // A year later: a fresh session for the same operator.
    p.owner.auth = { authorization: `Bearer ${await signOperatorToken(env.ctx.config.dashboardJwtSecret, p.owner.id, env.clock.now())}` };
    expect((await call('PATCH', `/api/projects/${p.id}`, p.owner, { description: 'new' })).status).toBe(200);
    const removed = await trimAudit(env.ctx);
    expect(removed).toBeGreaterThanOrEqual(3);
    const left = await entries(p);
    expect(left.map((e) => e.seq)).toEqual([4]);
    expect(await verify(p)).toMatchObject({ ok: true, checked: 1, anchor: { seq: 3 }, head: { seq: 4 } });
    // A later change continues the chain.
    expect((await call('PATCH', `/api/projects/${p.id}`, p.owner, { description: 'newer' })).status).toBe(200);
    expect(await verify(p)).toMatchObject({ ok: true, checked: 2 });
    // Running it again removes nothing more of this project.
    await trimAudit(env.ctx);
    expect((await entries(p)).length).toBe(2);
  });
});

describe('a secret replaced by another', () => {
  it('shows what was sent, masked, when the settings view cannot show the change', async () => {
    const p = await makeProject(env.ctx);
    const first = 're_FirstMailKeyValue_111111';
    const second = 're_SecondMailKeyValue_22222';
    expect((await call('PATCH', `/api/projects/${p.id}`, p.owner, { providerApiKey: first })).status).toBe(200);
    expect((await call('PATCH', `/api/projects/${p.id}`, p.owner, { providerApiKey: second })).status).toBe(200);
    const [latest] = await entries(p);
    expect(latest).toMatchObject({ action: 'settings.update', before: {}, after: { sent: { providerApiKey: '[masked]' } } });
    const text = await allAuditText();
    expect(text).not.toContain(first);
    expect(text).not.toContain(second);
  });
});

describe('when the entry cannot be written', () => {
  it('the change still answers its success, and the entry goes to the server log at error level, secrets masked', async () => {
    const p = await makeProject(env.ctx);
    const key = 're_LoggedButMaskedKey_3333333';
    await sqlClient.query("ALTER TABLE audit_entries ADD CONSTRAINT audit_test_refuse CHECK (target IS DISTINCT FROM 'refuse-me') NOT VALID");
    try {
      const r = await call('PATCH', `/api/projects/${p.id}/collections/refuse-me/realtime`, p.owner, { enabled: true });
      // No such collection: a 404, nothing to record. Create it, then change it.
      expect(r.status).toBe(404);
      expect((await call('POST', `/api/projects/${p.id}/collections`, p.owner, { name: 'refuse-me', schema: [] })).status).toBe(201);
      const logsBefore = env.logs.length;
      const changed = await call('PATCH', `/api/projects/${p.id}`, p.owner, { providerApiKey: key });
      expect(changed.status).toBe(200);
      const realtime = await call('PATCH', `/api/projects/${p.id}/collections/refuse-me/realtime`, p.owner, { enabled: true });
      expect(realtime.status, realtime.raw).toBe(200);
      const lines = env.logs.slice(logsBefore).filter((l) => l.includes('audit: the entry of a successful change could not be written'));
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({ level: 50, audit: { action: 'schema.realtime_update', target: 'refuse-me', projectId: p.id } });
      expect(env.logs.join('\n')).not.toContain(key);
    } finally {
      await sqlClient.query('ALTER TABLE audit_entries DROP CONSTRAINT audit_test_refuse');
    }
    // The collection's creation was refused by the log too (same target): only the settings change is in it.
    const actions = (await entries(p)).map((e) => e.action);
    expect(actions).toEqual(['settings.update']);
    expect((await verify(p)).ok).toBe(true);
  });
});
