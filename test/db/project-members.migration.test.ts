/**
 * Migration 071 on a database of the previous version: every existing project becomes owned by
 * its operator as its owner member, and nothing else changes (its owner_id, its other columns).
 */
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onServer, serverUrl } from '../helpers/server-db.js';
import { prepareDatabase } from '../../src/boot.js';
import { migrate } from '../../src/db/migrate.js';

const BEFORE_071 = readdirSync(fileURLToPath(new URL('../../migrations', import.meta.url))).filter((f) => f.endsWith('.sql') && f < '071').length;
const NAME = `mig_pm_${process.pid}_${Date.now().toString(36)}`;
let client: pg.Client;

const A = 'a'.repeat(24);
const B = 'b'.repeat(24);
const P = 'c'.repeat(24);
const Q = 'd'.repeat(24);
const R = 'e'.repeat(24);

beforeAll(async () => {
  await onServer(`CREATE DATABASE ${NAME} TEMPLATE template0`);
  await migrate(serverUrl(NAME), () => {}, BEFORE_071);
  client = new pg.Client({ connectionString: serverUrl(NAME) });
  await client.connect();
  await client.query(`INSERT INTO operators (id, email, password_hash) VALUES ('${A}', 'a@example.com', 'x'), ('${B}', 'b@example.com', 'x')`);
  for (const [id, owner] of [[P, A], [Q, A], [R, B]] as Array<[string, string]>) {
    await client.query(`INSERT INTO projects (id, owner_id, name, publishable_key_hash, secret_key_hash, jwt_secret, created_at)
      VALUES ('${id}', '${owner}', 'p${id[0]}', 'pk${id[0]}', 'sk${id[0]}', '{}', '2025-01-0${id === P ? 1 : 2}T00:00:00Z')`);
  }
  await prepareDatabase(serverUrl(NAME));
});
afterAll(async () => {
  await client?.end();
  await onServer(`DROP DATABASE IF EXISTS ${NAME} WITH (FORCE)`);
});

describe('071: project members', () => {
  it("makes each project's operator its one owner member, and leaves the projects as they were", async () => {
    const members = await client.query(`SELECT project_id, operator_id, role, added_by FROM project_members ORDER BY project_id`);
    expect(members.rows).toEqual([
      { project_id: P, operator_id: A, role: 'owner', added_by: null },
      { project_id: Q, operator_id: A, role: 'owner', added_by: null },
      { project_id: R, operator_id: B, role: 'owner', added_by: null },
    ]);
    const projects = await client.query(`SELECT id, owner_id, name FROM projects ORDER BY id`);
    expect(projects.rows).toEqual([
      { id: P, owner_id: A, name: 'pc' },
      { id: Q, owner_id: A, name: 'pd' },
      { id: R, owner_id: B, name: 'pe' },
    ]);
  });

  it('allows one owner per project', async () => {
    await expect(client.query(`INSERT INTO project_members (project_id, operator_id, role) VALUES ('${P}', '${B}', 'owner')`)).rejects.toThrow(/project_members_one_owner/);
  });
});
