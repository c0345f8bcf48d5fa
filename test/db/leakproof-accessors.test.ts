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
    ['{"a": 0.000}', 0],
    [`{"a": 1${'0'.repeat(298)}}`, 1e298], // 299 characters: the short path
    [`{"a": -1${'0'.repeat(298)}}`, -1e298], // 300: the long one
    [`{"a": 0.${'0'.repeat(296)}1}`, 1e-297],
    ['{"a": "12"}', null],
    ['{"a": true}', null],
    ['{"a": null}', null],
    ['{"a": [1]}', null],
    ['{}', null],
  ];
  it.each(cases)('%s → %s, without an error', async (json, expected) => {
    expect(await num(json)).toBe(expected);
  });

  it('gives what the previous definition gave (migration 012), so indexes built with it stay right', async () => {
    const digits = (n: number) => Array.from({ length: n }, (_, i) => String((i * 7 + 3) % 10)).join('');
    const texts = [
      '0', '-0', '0.000', '1', '-1', '0.1', '123.456', '-5.5e-301', '1e-300', '9.99e-301', '1e-310', '2.5e-324',
      '1e307', '1.7976931348623157e308', '1e308', '-1e308', '9.999999999999999e307', `1${'0'.repeat(298)}`,
      `1${'0'.repeat(299)}`, `-9${'9'.repeat(298)}`, `0.${'0'.repeat(297)}5`, `0.${digits(298)}`, `${digits(150)}.${digits(148)}`,
      '"7"', 'true', 'null', '[1]', '{"b": 1}',
      ...Array.from({ length: 200 }, (_, i) => String((i % 2 ? -1 : 1) * Math.sin(i + 1) * 10 ** ((i * 37) % 616 - 308))),
    ];
    const rows = await env.ctx.db.admin.transaction().execute(async (trx) => {
      await sql`CREATE FUNCTION pg_temp.plinth_num_012(doc jsonb, key text) RETURNS float8 LANGUAGE plpgsql IMMUTABLE STRICT AS $b$ BEGIN
        RETURN CASE WHEN jsonb_typeof(doc -> key) = 'number' AND abs((doc -> key)::numeric) < 1e308 THEN
                 CASE WHEN abs((doc -> key)::numeric) >= 1e-300 THEN (doc -> key)::float8
                      WHEN abs((doc -> key)::numeric) * 2::numeric ^ 1075 <= 1 THEN 0
                      ELSE (doc -> key)::float8 END
               END;
      END $b$`.execute(trx);
      return (
        await sql<{ t: string; now: number | null; before: number | null }>`
          SELECT t, plinth_num(jsonb_build_object('a', t::jsonb), 'a') AS now, pg_temp.plinth_num_012(jsonb_build_object('a', t::jsonb), 'a') AS before
          FROM unnest(${texts}::text[]) AS t`.execute(trx)
      ).rows;
    });
    expect(rows).toHaveLength(texts.length);
    expect(rows.filter((r) => !Object.is(r.now, r.before))).toEqual([]);
    expect(rows.filter((r) => r.before !== null).length).toBeGreaterThan(200);
  });

  it('the accessors and jsonb containment are declared LEAKPROOF (the test server runs migrations as a superuser)', async () => {
    const rows = await sql<{ proname: string; proleakproof: boolean }>`
      SELECT proname, proleakproof FROM pg_proc WHERE proname IN ('plinth_num', 'plinth_txt', 'plinth_key', 'jsonb_contains') ORDER BY proname`.execute(env.ctx.db.admin);
    expect(rows.rows).toEqual([
      { proname: 'jsonb_contains', proleakproof: true },
      { proname: 'plinth_key', proleakproof: true },
      { proname: 'plinth_num', proleakproof: true },
      { proname: 'plinth_txt', proleakproof: true },
    ]);
  });

  it('plinth_key answers every input without an error: the first 200 characters, or null', async () => {
    const key = async (json: string) =>
      (await sql<{ v: string | null }>`SELECT plinth_key(${json}::jsonb, 'a') AS v`.execute(env.ctx.db.admin)).rows[0]!.v;
    expect(await key('{"a": "short"}')).toBe('short');
    expect(await key(JSON.stringify({ a: 'é'.repeat(500) }))).toBe('é'.repeat(200));
    expect(await key('{"a": 5}')).toBe('5');
    expect(await key('{"a": null}')).toBeNull();
    expect(await key('{}')).toBeNull();
    expect(await key('{"a": [1, 2]}')).toBe('[1, 2]');
  });
});
