/**
 * Migration 009 on a database that already holds documents in the old shared table: every
 * row moves to its collection's partition, per-collection indexes are rebuilt on it (unique
 * ones still enforced on live rows), and rows of collections that no longer exist are dropped.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onServer, serverUrl } from '../helpers/server-db.js';
import { prepareDatabase } from '../../src/boot.js';
import { migrate } from '../../src/db/migrate.js';

const NAME = `mig_${process.pid}_${Date.now().toString(36)}`;
let client: pg.Client;

const OP = 'a'.repeat(24);
const PROJECT = 'b'.repeat(24);
const COL = 'c'.repeat(24);
const GONE = 'd'.repeat(24);
const doc = (n: number) => n.toString(16).padStart(24, '0');

/** The pre-009 layout: shared table, partial per-collection indexes named as the app named them. */
async function seedOldLayout(): Promise<void> {
  await client.query(`INSERT INTO operators (id, email, password_hash) VALUES ('${OP}', 'o@example.com', 'x')`);
  await client.query(`INSERT INTO projects (id, owner_id, name, publishable_key_hash, secret_key_hash, jwt_secret)
    VALUES ('${PROJECT}', '${OP}', 'p', 'pk', 'sk', '{}')`);
  await client.query(`INSERT INTO collections (id, project_id, name, fields) VALUES ('${COL}', '${PROJECT}', 'items', '[]')`);
  await client.query(`INSERT INTO collections (id, project_id, name, fields) VALUES ('${GONE}', '${PROJECT}', 'gone', '[]')`);
  await client.query(`INSERT INTO documents (project_id, collection_id, id, data, size_bytes, deleted_at)
    SELECT '${PROJECT}', CASE WHEN g <= 30 THEN '${COL}' ELSE '${GONE}' END, lpad(to_hex(g), 24, '0'),
           jsonb_build_object('code', 'k' || g, 'n', g), 10, CASE WHEN g = 1 THEN now() END
    FROM generate_series(1, 40) g`);
  const live = `WHERE collection_id = '${COL}' AND deleted_at IS NULL`;
  await client.query(`CREATE UNIQUE INDEX du_${COL}_0000000001 ON documents (plinth_txt(data, 'code')) ${live}`);
  await client.query(`CREATE INDEX dx_${COL}_0000000002 ON documents (plinth_num(data, 'n'), created_at DESC, id DESC) ${live}`);
  // A collection deleted by hand: its rows would have cascaded away with it in the old layout.
  await client.query(`DELETE FROM collections WHERE id = '${GONE}'`);
}

beforeAll(async () => {
  await onServer(`CREATE DATABASE ${NAME} TEMPLATE template0`);
  await migrate(serverUrl(NAME), () => {}, 8);
  client = new pg.Client({ connectionString: serverUrl(NAME) });
  await client.connect();
  await seedOldLayout();
  await prepareDatabase(serverUrl(NAME));
});
afterAll(async () => {
  await client?.end();
  await onServer(`DROP DATABASE IF EXISTS ${NAME} WITH (FORCE)`);
});

describe('009: documents partitioned by collection', () => {
  it('the first start after the upgrade gives a migrated partition its read policies, so the API roles can read it directly', async () => {
    const policies = await client.query(`SELECT policyname, cmd FROM pg_policies WHERE tablename = 'documents_${COL}' ORDER BY policyname`);
    expect(policies.rows).toEqual([
      { policyname: 'documents_full', cmd: 'SELECT' },
      { policyname: 'documents_read', cmd: 'SELECT' },
      { policyname: 'documents_tenant', cmd: 'SELECT' },
    ]);
    await client.query('BEGIN');
    try {
      await client.query(`SET LOCAL ROLE plinth_api_publishable; SELECT set_config('plinth.project_id', '${PROJECT}', true)`);
      expect((await client.query(`SELECT count(*)::int AS n FROM documents_${COL}`)).rows[0].n).toBe(30);
    } finally {
      await client.query('ROLLBACK');
    }
  });

  it('moves every row of an existing collection into its partition', async () => {
    const part = await client.query(`SELECT count(*)::int AS n, sum(size_bytes)::int AS bytes FROM documents_${COL}`);
    expect(part.rows[0]).toEqual({ n: 30, bytes: 300 });
    const parent = await client.query(`SELECT count(*)::int AS n FROM documents`);
    expect(parent.rows[0].n).toBe(30);
    expect((await client.query(`SELECT to_regclass('documents_shared') AS t`)).rows[0].t).toBeNull();
  });

  it('rebuilds the per-collection indexes on the partition: unique on live rows, the others plain', async () => {
    const idx = await client.query(`SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'documents_${COL}' AND indexname ~ '^d[ux]_' ORDER BY 1`);
    expect(idx.rows.map((r) => r.indexname)).toEqual([`du_${COL}_0000000001`, `dx_${COL}_0000000002`]);
    expect(idx.rows[0].indexdef).toMatch(/UNIQUE INDEX .* WHERE \(deleted_at IS NULL\)$/);
    expect(idx.rows[1].indexdef).not.toMatch(/WHERE/);
  });

  it('still refuses a duplicate live value, and accepts the value of a soft-deleted row', async () => {
    const insert = (id: string, code: string) =>
      client.query(`INSERT INTO documents (project_id, collection_id, id, data) VALUES ('${PROJECT}', '${COL}', '${id}', jsonb_build_object('code', '${code}'))`);
    await expect(insert(doc(100), 'k2')).rejects.toMatchObject({ code: '23505' });
    await expect(insert(doc(101), 'k1')).resolves.toBeDefined();
  });
});
