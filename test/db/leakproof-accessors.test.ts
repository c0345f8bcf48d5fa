/**
 * Threat: a field accessor that fails reveals a value. plinth_num / plinth_txt are LEAKPROOF,
 * so the planner may run them on rows the policies hide (as index conditions), and an error
 * message would carry the row's value. They must answer every input without an error, and
 * their results for ordinary values must never change (indexes are built on them).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../helpers/context.js';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(() => env.close());

const num = async (json: string) =>
  (await sql<{ v: number | null }>`SELECT plinth_num(${json}::jsonb, 'a') AS v`.execute(env.ctx.db.admin)).rows[0]!.v;

describe('plinth_num', () => {
  const cases: Array<[string, number | null]> = [
    ['{"a": 5}', 5],
    ['{"a": -2.5}', -2.5],
    ['{"a": 0}', 0],
    ['{"a": 1.5e300}', 1.5e300],
    ['{"a": -1e-320}', -1e-320],
    ['{"a": 2.4703282292062328e-324}', 5e-324],
    ['{"a": 2.4703282292062327e-324}', 0],
    ['{"a": 1e-400}', 0],
    ['{"a": -1e-400}', 0],
    ['{"a": 1e400}', null],
    ['{"a": "12"}', null],
    ['{"a": true}', null],
    ['{"a": null}', null],
    ['{"a": [1]}', null],
    ['{}', null],
  ];
  it.each(cases)('%s → %s, without an error', async (json, expected) => {
    expect(await num(json)).toBe(expected);
  });

  it('both accessors are declared LEAKPROOF (the test server runs migrations as a superuser)', async () => {
    const rows = await sql<{ proname: string; proleakproof: boolean }>`
      SELECT proname, proleakproof FROM pg_proc WHERE proname IN ('plinth_num', 'plinth_txt') ORDER BY proname`.execute(env.ctx.db.admin);
    expect(rows.rows).toEqual([{ proname: 'plinth_num', proleakproof: true }, { proname: 'plinth_txt', proleakproof: true }]);
  });
});
