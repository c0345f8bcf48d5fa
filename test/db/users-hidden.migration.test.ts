/**
 * Migration 065 on a database whose users schemas already declare hidden fields: the values
 * existing users hold in app_users.data leave it (raw SQL in a publishable scope could read
 * them there) for `private` ("owner") and `secret`, by each project's own users schema; users
 * of a project without hidden fields are left as they were.
 */
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onServer, serverUrl } from '../helpers/server-db.js';
import { prepareDatabase } from '../../src/boot.js';
import { migrate } from '../../src/db/migrate.js';

/** Migrations are not numbered without gaps: how many come before 065. */
const BEFORE_065 = readdirSync(fileURLToPath(new URL('../../migrations', import.meta.url))).filter((f) => f.endsWith('.sql') && f < '065').length;
const NAME = `mig_uh_${process.pid}_${Date.now().toString(36)}`;
let client: pg.Client;

const OP = 'a'.repeat(24);
const P = 'b'.repeat(24);
const Q = 'c'.repeat(24);
const user = (n: number) => n.toString(16).padStart(24, '0');
const HIDDEN = JSON.stringify([
  { key: 'email', type: 'String', required: true, unique: true },
  { key: 'password', type: 'String', required: true },
  { key: 'phone', type: 'String', hidden: 'owner' },
  { key: 'ssn', type: 'String', hidden: 'secret' },
  { key: 'city', type: 'String' },
]);
const PLAIN = JSON.stringify([{ key: 'phone', type: 'String' }, { key: 'city', type: 'String' }]);

beforeAll(async () => {
  await onServer(`CREATE DATABASE ${NAME} TEMPLATE template0`);
  await migrate(serverUrl(NAME), () => {}, BEFORE_065);
  client = new pg.Client({ connectionString: serverUrl(NAME) });
  await client.connect();
  await client.query(`INSERT INTO operators (id, email, password_hash) VALUES ('${OP}', 'o@example.com', 'x')`);
  for (const id of [P, Q]) {
    await client.query(`INSERT INTO projects (id, owner_id, name, publishable_key_hash, secret_key_hash, jwt_secret)
      VALUES ('${id}', '${OP}', 'p${id[0]}', 'pk${id[0]}', 'sk${id[0]}', '{}')`);
  }
  await client.query(`INSERT INTO collections (project_id, name, fields) VALUES ('${P}', 'Users', '${HIDDEN}'), ('${Q}', 'users', '${PLAIN}')`);
  const rows: Array<[number, string, object]> = [
    [1, P, { phone: '111', ssn: 'AAA', city: 'Leeds' }],
    [2, P, { city: 'York' }],
    [3, Q, { phone: '333', city: 'Hull' }],
  ];
  for (const [n, project, data] of rows) {
    await client.query(`INSERT INTO app_users (id, project_id, email, password_hash, data) VALUES ($1, $2, $3, 'x', $4)`, [user(n), project, `u${n}@example.com`, data]);
  }
  await prepareDatabase(serverUrl(NAME));
});
afterAll(async () => {
  await client?.end();
  await onServer(`DROP DATABASE IF EXISTS ${NAME} WITH (FORCE)`);
});

describe('065: hidden fields of existing users', () => {
  it('moves each project\'s hidden values out of data, and nothing else', async () => {
    const res = await client.query(`SELECT id, data, private, secret FROM app_users ORDER BY id`);
    expect(res.rows).toEqual([
      { id: user(1), data: { city: 'Leeds' }, private: { phone: '111' }, secret: { ssn: 'AAA' } },
      { id: user(2), data: { city: 'York' }, private: null, secret: null },
      { id: user(3), data: { phone: '333', city: 'Hull' }, private: null, secret: null },
    ]);
  });

  it('the publishable role has no privilege on the two columns', async () => {
    const res = await client.query(`SELECT has_column_privilege('plinth_api_publishable', 'app_users', 'private', 'SELECT') AS p,
      has_column_privilege('plinth_api_publishable', 'app_users', 'secret', 'SELECT') AS s,
      has_column_privilege('plinth_api_publishable', 'app_users', 'data', 'SELECT') AS d`);
    expect(res.rows[0]).toEqual({ p: false, s: false, d: true });
  });
});
