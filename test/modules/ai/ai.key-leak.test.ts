/**
 * Threat: a personal AI key (or the platform key) leaking through the database, an API
 * response or the logs. Keys are stored only AES-256-GCM encrypted, only `hasAiKey` is ever
 * returned, and no log line carries a key, even when the provider rejects it or fails.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCollection, makeOperator, makeProject, type TestOperator, type TestProject } from '../../helpers/fixtures.js';
import { buildQuery, createAiEnv, PLATFORM_KEY, putAccountKey, putProjectKey, suggestSchema, type AiTestEnv } from './setup.js';

const ACCOUNT_KEY = 'gsk_LEAKCHECKaccount7f3a9c1e5b2d8';
const PROJECT_KEY = 'gsk_LEAKCHECKproject4e8b2a6d0c9f1';
const REJECTED_KEY = 'gsk_LEAKCHECKrejected1a2b3c4d5e6f';
const INVALID_KEY = 'gsk_LEAKCHECK invalid with spaces';
const SECRETS = [ACCOUNT_KEY, PROJECT_KEY, REJECTED_KEY, INVALID_KEY, PLATFORM_KEY, 'LEAKCHECK'];

let t: AiTestEnv;
let op: TestOperator;
let project: TestProject;
const transcripts: string[] = [];

async function record(p: Promise<{ statusCode: number; body: string; headers: Record<string, unknown> }>) {
  const res = await p;
  transcripts.push(`${res.statusCode} ${JSON.stringify(res.headers)} ${res.body}`);
  return res;
}

beforeAll(async () => {
  t = await createAiEnv({ AI_TIMEOUT_MS: '200', LOG_LEVEL: 'trace' });
  op = await makeOperator(t.env.ctx);
  project = await makeProject(t.env.ctx, op);
  await makeCollection(t.env.ctx, project.id, 'notes', [{ key: 'title', type: 'String' }]);

  await record(putAccountKey(t.env, op, INVALID_KEY));
  await record(putAccountKey(t.env, op, ACCOUNT_KEY));
  await record(putProjectKey(t.env, op, project.id, PROJECT_KEY));
  const ask = () => record(buildQuery(t.env, op, project.id, { collection: 'notes', prompt: 'all notes' }));
  await ask();
  t.groq.enqueue({ status: 500, body: {} });
  await ask();
  t.groq.enqueue({ delayMs: 600 });
  await ask();
  t.groq.rejectKeys.add(PROJECT_KEY);
  await ask();
  await record(putProjectKey(t.env, op, project.id, null));
  await ask();
  await record(putAccountKey(t.env, op, REJECTED_KEY));
  t.groq.rejectKeys.add(REJECTED_KEY);
  await ask();
  await record(putAccountKey(t.env, op, null));
  t.groq.rejectKeys.add(PLATFORM_KEY);
  await ask();
  await record(suggestSchema(t.env, op, project.id, { description: 'a todo list' }));
  await record(putAccountKey(t.env, op, ACCOUNT_KEY));
  await record(putProjectKey(t.env, op, project.id, PROJECT_KEY));
});
afterAll(() => t.close());

function expectNoSecret(text: string): void {
  for (const s of SECRETS) expect(text).not.toContain(s);
}

describe('AI keys never leak', () => {
  it('the scenario exercised the provider with every key', () => {
    const used = new Set(t.groq.requests.map((r) => r.authorization));
    expect(used).toEqual(new Set([`Bearer ${PROJECT_KEY}`, `Bearer ${ACCOUNT_KEY}`, `Bearer ${REJECTED_KEY}`, `Bearer ${PLATFORM_KEY}`]));
    expect(transcripts.map((x) => Number(x.slice(0, 3)))).toEqual(expect.arrayContaining([400, 401, 502, 504]));
  });

  it('no table row in the database contains a raw key (every table, as text)', async () => {
    const tables = await sql<{ schema: string; name: string }>`
      SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
      WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`.execute(t.env.ctx.db.admin);
    expect(tables.rows.length).toBeGreaterThan(3);
    for (const { schema, name } of tables.rows) {
      const dump = await sql<{ text: string | null }>`SELECT string_agg(t::text, '|') AS text FROM ${sql.table(`${schema}.${name}`)} t`.execute(t.env.ctx.db.admin);
      expectNoSecret(dump.rows[0]?.text ?? '');
    }
    const stored = await sql<{ text: string }>`SELECT ai_key::text AS text FROM operators WHERE id = ${op.id}`.execute(t.env.ctx.db.admin);
    expect(stored.rows[0]!.text).toMatch(/"encrypted"/);
  });

  it('no response (body or headers) contains a key; they only say hasAiKey', () => {
    expect(transcripts.length).toBeGreaterThan(10);
    for (const x of transcripts) expectNoSecret(x);
    const keyAnswers = transcripts.filter((x) => x.includes('hasAiKey'));
    for (const x of keyAnswers) expect(JSON.parse(x.slice(x.indexOf(' {"success"') + 1)).data).toEqual({ hasAiKey: expect.any(Boolean) });
  });

  it('no log line contains a key, even at trace level and on provider failures', () => {
    const all = t.env.logs.join('\n');
    expect(all).toContain('AI provider call failed');
    expectNoSecret(all);
  });
});
