/**
 * Migration 017 on a database whose users schemas already declare unique fields: every such
 * field is enforced from then on, except one whose users already hold duplicates (it stays
 * unenforced until the operator resolves them and saves the schema, see docs/auth.md).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onServer, serverUrl } from '../helpers/server-db.js';
import { prepareDatabase } from '../../src/boot.js';
import { migrate } from '../../src/db/migrate.js';

const NAME = `mig_uq_${process.pid}_${Date.now().toString(36)}`;
let client: pg.Client;

const OP = 'a'.repeat(24);
const P = 'b'.repeat(24);
const user = (n: number) => n.toString(16).padStart(24, '0');
const FIELDS = JSON.stringify([
  { key: 'email', type: 'String', required: true, unique: true },
  { key: 'password', type: 'String', required: true },
  { key: 'username', type: 'String', unique: true },
  { key: 'nick', type: 'String', unique: true },
  { key: 'badge', type: 'Number', unique: true },
]);

beforeAll(async () => {
  await onServer(`CREATE DATABASE ${NAME} TEMPLATE template0`);
  await migrate(serverUrl(NAME), () => {}, 16);
  client = new pg.Client({ connectionString: serverUrl(NAME) });
  await client.connect();
  await client.query(`INSERT INTO operators (id, email, password_hash) VALUES ('${OP}', 'o@example.com', 'x')`);
  await client.query(`INSERT INTO projects (id, owner_id, name, publishable_key_hash, secret_key_hash, jwt_secret)
    VALUES ('${P}', '${OP}', 'p', 'pk', 'sk', '{}')`);
  await client.query(`INSERT INTO collections (project_id, name, fields) VALUES ('${P}', 'users', '${FIELDS}')`);
  const rows: Array<[number, object]> = [
    [1, { username: 'dup', nick: 'one', badge: 1 }],
    [2, { username: 'dup', nick: 'two', badge: 2 }],
    [3, { username: 'solo' }],
  ];
  for (const [n, data] of rows) {
    await client.query(`INSERT INTO app_users (id, project_id, email, password_hash, data) VALUES ($1, '${P}', $2, 'x', $3)`, [user(n), `u${n}@example.com`, data]);
  }
  await prepareDatabase(serverUrl(NAME));
});
afterAll(async () => {
  await client?.end();
  await onServer(`DROP DATABASE IF EXISTS ${NAME} WITH (FORCE)`);
});

describe('017: unique fields of existing users schemas', () => {
  it('enforces the fields without duplicates, leaves the one with duplicates unenforced', async () => {
    const fields = await client.query(`SELECT field, numeric FROM app_user_unique_fields WHERE project_id = '${P}' ORDER BY field`);
    expect(fields.rows).toEqual([{ field: 'badge', numeric: true }, { field: 'nick', numeric: false }]);
    const values = await client.query(`SELECT field, value, user_id FROM app_user_unique_values ORDER BY field, value`);
    expect(values.rows).toEqual([
      { field: 'badge', value: '1', user_id: user(1) },
      { field: 'badge', value: '2', user_id: user(2) },
      { field: 'nick', value: 'one', user_id: user(1) },
      { field: 'nick', value: 'two', user_id: user(2) },
    ]);
  });

  it('refuses a taken value from then on (the trigger is in place)', async () => {
    const insert = (n: number, data: object) =>
      client.query(`INSERT INTO app_users (id, project_id, email, password_hash, data) VALUES ($1, '${P}', $2, 'x', $3)`, [user(n), `u${n}@example.com`, data]);
    await expect(insert(4, { nick: 'one' })).rejects.toMatchObject({ code: '23505', column: 'nick' });
    await expect(insert(5, { nick: 'five', username: 'dup' })).resolves.toBeDefined();
  });
});
