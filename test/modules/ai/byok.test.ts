/** PUT /api/user/me/byok and PUT /api/projects/:projectId/byok: validation, access, plan gate. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decrypt } from '../../../src/lib/crypto.js';
import { PLANS } from '../../../src/modules/plans/plans.js';
import { makeOperator, makeProject, type TestOperator, type TestProject } from '../../helpers/fixtures.js';
import { createAiEnv, putAccountKey, putProjectKey, type AiTestEnv } from './setup.js';

let t: AiTestEnv;
let op: TestOperator;
let project: TestProject;
const KEY = 'gsk_account_abcdefghijklmnopqrstuvwxyz012345';

beforeAll(async () => {
  t = await createAiEnv();
  op = await makeOperator(t.env.ctx);
  project = await makeProject(t.env.ctx, op);
});
afterAll(() => t.close());

async function accountKeyRow(id: string) {
  return t.env.ctx.db.admin.selectFrom('operators').select('ai_key').where('id', '=', id).executeTakeFirstOrThrow();
}

describe('PUT /api/user/me/byok', () => {
  it('saves a valid key encrypted and answers only hasAiKey', async () => {
    const res = await putAccountKey(t.env, op, KEY);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true, data: { hasAiKey: true }, message: 'AI key saved.' });
    const row = await accountKeyRow(op.id);
    expect(row.ai_key).toMatchObject({ encrypted: expect.any(String), iv: expect.stringMatching(/^[0-9a-f]{32}$/), tag: expect.any(String) });
    expect(decrypt(t.env.config.encryptionKey, row.ai_key)).toBe(KEY);
  });

  it('null clears the key', async () => {
    const res = await putAccountKey(t.env, op, null);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true, data: { hasAiKey: false }, message: 'AI key removed.' });
    expect((await accountKeyRow(op.id)).ai_key).toBeNull();
  });

  it.each([
    ['a wrong prefix', 'sk_live_abcdef'],
    ['the bare prefix', 'gsk_'],
    ['an empty string', ''],
    ['more than 200 characters', 'gsk_' + 'a'.repeat(197)],
    ['a space', 'gsk_abc def'],
    ['a newline', 'gsk_abc\ndef'],
    ['a control character', 'gsk_abc\u0007def'],
    ['a non-ASCII character', 'gsk_abcé'],
    ['a number', 12345],
  ])('rejects %s with 400 and keeps the stored key', async (_name, bad) => {
    await putAccountKey(t.env, op, KEY);
    const res = await putAccountKey(t.env, op, bad);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ success: false, data: {} });
    expect(decrypt(t.env.config.encryptionKey, (await accountKeyRow(op.id)).ai_key)).toBe(KEY);
  });

  it('accepts exactly 200 characters', async () => {
    const res = await putAccountKey(t.env, op, 'gsk_' + 'a'.repeat(196));
    expect(res.statusCode).toBe(200);
  });

  it('rejects a missing aiKey or extra members with 400', async () => {
    const missing = await t.env.app.inject({ method: 'PUT', url: '/api/user/me/byok', headers: op.auth, payload: {} });
    expect(missing.statusCode).toBe(400);
    const extra = await t.env.app.inject({ method: 'PUT', url: '/api/user/me/byok', headers: op.auth, payload: { aiKey: null, plan: 'pro' } });
    expect(extra.statusCode).toBe(400);
  });

  it('needs a dashboard session', async () => {
    const res = await t.env.app.inject({ method: 'PUT', url: '/api/user/me/byok', payload: { aiKey: KEY } });
    expect(res.statusCode).toBe(401);
  });
});

describe('PUT /api/projects/:projectId/byok', () => {
  it('saves the key in projects.secrets.aiKey, encrypted, keeping other secrets', async () => {
    await t.env.ctx.db.admin
      .updateTable('projects')
      .set({ secrets: JSON.stringify({ other: { encrypted: 'aa', iv: 'bb', tag: 'cc' } }) as never })
      .where('id', '=', project.id)
      .execute();
    const res = await putProjectKey(t.env, op, project.id, 'gsk_project_key_1');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true, data: { hasAiKey: true }, message: 'AI key saved.' });
    const row = await t.env.ctx.db.admin.selectFrom('projects').select('secrets').where('id', '=', project.id).executeTakeFirstOrThrow();
    expect(decrypt(t.env.config.encryptionKey, row.secrets.aiKey)).toBe('gsk_project_key_1');
    expect(row.secrets.other).toEqual({ encrypted: 'aa', iv: 'bb', tag: 'cc' });

    const cleared = await putProjectKey(t.env, op, project.id, null);
    expect(cleared.json().data).toEqual({ hasAiKey: false });
    const after = await t.env.ctx.db.admin.selectFrom('projects').select('secrets').where('id', '=', project.id).executeTakeFirstOrThrow();
    expect(after.secrets.aiKey).toBeUndefined();
    expect(after.secrets.other).toBeDefined();
  });

  it('400 for a malformed project id', async () => {
    const res = await putProjectKey(t.env, op, 'not-an-id', KEY);
    expect(res.statusCode).toBe(400);
  });

  it("404 for a missing project or someone else's project", async () => {
    expect((await putProjectKey(t.env, op, '0123456789abcdef01234567', KEY)).statusCode).toBe(404);
    const stranger = await makeOperator(t.env.ctx);
    expect((await putProjectKey(t.env, stranger, project.id, KEY)).statusCode).toBe(404);
  });

  it('400 for a malformed key', async () => {
    expect((await putProjectKey(t.env, op, project.id, 'nope')).statusCode).toBe(400);
  });
});

describe('plan gate (personalAiKey flag)', () => {
  it('403 "Pro feature" when the plan does not allow personal keys; clearing is still allowed', async () => {
    const saved = PLANS.free.personalAiKey;
    PLANS.free.personalAiKey = false;
    try {
      const account = await putAccountKey(t.env, op, KEY);
      expect(account.statusCode).toBe(403);
      expect(account.json().message).toMatch(/Pro feature/);
      const proj = await putProjectKey(t.env, op, project.id, KEY);
      expect(proj.statusCode).toBe(403);
      expect(proj.json().message).toMatch(/Pro feature/);
      expect((await putAccountKey(t.env, op, null)).statusCode).toBe(200);
      expect((await putProjectKey(t.env, op, project.id, null)).statusCode).toBe(200);
      const pro = await makeOperator(t.env.ctx, { plan: 'pro' });
      expect((await putAccountKey(t.env, pro, KEY)).statusCode).toBe(200);
    } finally {
      PLANS.free.personalAiKey = saved;
    }
  });

  it('allows personal keys on both plans by default', async () => {
    expect(PLANS.free.personalAiKey).toBe(true);
    expect(PLANS.pro.personalAiKey).toBe(true);
  });
});
