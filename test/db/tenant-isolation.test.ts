/**
 * Threat: one project reading or writing another project's rows through a code path that
 * forgets (or forges) a project filter. The PostgreSQL policies must stop it on their own.
 */
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../../src/db/pool.js';
import { objectId } from '../../src/lib/ids.js';
import { createTestEnv, type TestEnv } from '../helpers/context.js';
import { makeCollection, makeProject, type TestProject } from '../helpers/fixtures.js';

let env: TestEnv;
let a: TestProject;
let b: TestProject;
let colA: { id: string };
let colB: { id: string };

beforeAll(async () => {
  env = await createTestEnv();
  a = await makeProject(env.ctx);
  b = await makeProject(env.ctx);
  colA = await makeCollection(env.ctx, a.id, 'notes');
  colB = await makeCollection(env.ctx, b.id, 'notes');
  for (const [p, c] of [[a, colA], [b, colB]] as const) {
    await env.ctx.db.admin
      .insertInto('documents')
      .values({ project_id: p.id, collection_id: c.id, id: objectId(), owner_id: null, data: JSON.stringify({ secret: p.id }) as never })
      .execute();
  }
});
afterAll(() => env.close());

describe('tenant isolation by row-level security', () => {
  it('a hand-written SELECT of all documents through the API role sees only the scoped project', async () => {
    const rows = await env.ctx.db.tenant({ projectId: a.id, keyKind: 'secret' }, (tx) =>
      sql<{ project_id: string }>`SELECT project_id FROM documents`.execute(tx),
    );
    expect(rows.rows.length).toBe(1);
    expect(rows.rows.every((r) => r.project_id === a.id)).toBe(true);
  });

  it('a SELECT that names the other project explicitly returns nothing', async () => {
    const rows = await env.ctx.db.tenant({ projectId: a.id, keyKind: 'secret' }, (tx) =>
      sql`SELECT * FROM documents WHERE project_id = ${b.id}`.execute(tx),
    );
    expect(rows.rows).toEqual([]);
  });

  it('writing a row into another project is rejected by the policy', async () => {
    await expect(
      env.ctx.db.tenant({ projectId: a.id, keyKind: 'secret' }, (tx) =>
        sql`INSERT INTO documents (project_id, collection_id, id, data) VALUES (${b.id}, ${colB.id}, ${objectId()}, '{}')`.execute(tx),
      ),
    ).rejects.toThrow(/row-level security/);
  });

  it('updates and deletes aimed at another project touch no rows', async () => {
    const res = await env.ctx.db.tenant({ projectId: a.id, keyKind: 'secret' }, async (tx) => {
      const u = await sql`UPDATE documents SET data = '{}' WHERE project_id = ${b.id}`.execute(tx);
      const d = await sql`DELETE FROM documents WHERE project_id = ${b.id}`.execute(tx);
      return [Number(u.numAffectedRows), Number(d.numAffectedRows)];
    });
    expect(res).toEqual([0, 0]);
    const left = await env.ctx.db.admin.selectFrom('documents').select('id').where('project_id', '=', b.id).execute();
    expect(left.length).toBe(1);
  });

  // Since migrations/040 the documents privileges are per sub-role (field protection): plinth_api
  // alone is refused outright, which is stronger than an empty answer.
  it('the API role has no BYPASSRLS and sees nothing without a tenant scope', async () => {
    const client = new pg.Client({ connectionString: env.databaseUrl });
    await client.connect();
    try {
      const role = await client.query(`SELECT rolbypassrls FROM pg_roles WHERE rolname = 'plinth_api'`);
      expect(role.rows[0].rolbypassrls).toBe(false);
      await client.query('BEGIN; SET LOCAL ROLE plinth_api');
      await expect(client.query('SELECT * FROM documents')).rejects.toThrow(/permission denied/);
      await client.query('ROLLBACK');
    } finally {
      await client.end();
    }
  });

  it("another project's partition, read directly, shows nothing; no API role can write to a partition around the parent's policies", async () => {
    const part = `documents_${colB.id}`;
    const read = await env.ctx.db.tenant({ projectId: a.id, keyKind: 'secret' }, (tx) => sql.raw(`SELECT * FROM ${part}`).execute(tx));
    expect(read.rows).toEqual([]);
    const own = await env.ctx.db.tenant({ projectId: b.id, keyKind: 'secret' }, (tx) => sql.raw(`SELECT id FROM ${part}`).execute(tx));
    expect(own.rows).toHaveLength(1);
    for (const stmt of [`DELETE FROM ${part}`, `UPDATE ${part} SET data = '{}'`, `INSERT INTO ${part} (project_id, collection_id, id, data) VALUES ('${b.id}', '${colB.id}', '${objectId()}', '{}')`]) {
      for (const keyKind of ['secret', 'publishable'] as const) {
        await expect(env.ctx.db.tenant({ projectId: b.id, keyKind }, (tx) => sql.raw(stmt).execute(tx)), stmt).rejects.toThrow(/permission denied/);
      }
    }
    const left = await env.ctx.db.admin.selectFrom('documents').select('id').where('collection_id', '=', colB.id).execute();
    expect(left).toHaveLength(1);
  });

  it('the API role in no sub-role sees nothing in a partition either', async () => {
    const client = new pg.Client({ connectionString: env.databaseUrl });
    await client.connect();
    try {
      await client.query('BEGIN; SET LOCAL ROLE plinth_api');
      await client.query(`SELECT set_config('plinth.project_id', '${b.id}', true)`);
      await expect(client.query(`SELECT * FROM documents_${colB.id}`)).rejects.toThrow(/permission denied/);
      await client.query('ROLLBACK');
    } finally {
      await client.end();
    }
  });

  it('a pooled connection reused for another project carries only the new scope', async () => {
    // Sequential calls get the same idle connection back (LIFO), with its remembered scope.
    for (const [p, other] of [[a, b], [b, a], [a, b]] as const) {
      const rows = await env.ctx.db.read({ projectId: p.id, keyKind: 'secret' }, (db) =>
        sql<{ project_id: string }>`SELECT project_id FROM documents`.execute(db),
      );
      expect(rows.rows.map((r) => r.project_id)).toEqual([p.id]);
      expect(rows.rows.some((r) => r.project_id === other.id)).toBe(false);
    }
  });

  it('a handle kept past the end of its call refuses to run: no query lands on a connection back in the pool', async () => {
    let kept: Parameters<Parameters<typeof env.ctx.db.read>[1]>[0] | undefined;
    await env.ctx.db.read({ projectId: a.id, keyKind: 'secret' }, async (db) => {
      kept = db;
    });
    await expect(sql`SELECT project_id FROM documents`.execute(kept!)).rejects.toThrow(/must run inside db.tenant\(\) or db.read\(\)/);
  });

  it('a statement that fails leaves no scope behind for the next caller', async () => {
    await expect(
      env.ctx.db.read({ projectId: a.id, keyKind: 'secret' }, (db) => sql`SELECT 1/0`.execute(db)),
    ).rejects.toThrow(/division by zero/);
    const rows = await env.ctx.db.read({ projectId: b.id, keyKind: 'secret' }, (db) =>
      sql<{ project_id: string }>`SELECT project_id FROM documents`.execute(db),
    );
    expect(rows.rows.map((r) => r.project_id)).toEqual([b.id]);
  });

  it('tenant connections run as an API role (by key kind), never as the owner', async () => {
    const whoAs = async (keyKind: 'secret' | 'publishable') =>
      (await env.ctx.db.read({ projectId: a.id, keyKind }, (db) => sql<{ u: string }>`SELECT current_user AS u`.execute(db))).rows[0]!.u;
    expect(await whoAs('secret')).toBe('plinth_api_full');
    expect(await whoAs('publishable')).toBe('plinth_api_publishable');
    expect(await whoAs('secret')).toBe('plinth_api_full');
  });

  it('a rolled-back first transaction does not leave its connection running as the owner', async () => {
    // SET ROLE sent in the same batch as BEGIN belongs to that transaction: a rollback undoes it.
    const db = createDb(env.databaseUrl, { tenant: 1, admin: 1 });
    try {
      await expect(db.tenant({ projectId: a.id, keyKind: 'secret' }, async () => { throw new Error('handler failed'); })).rejects.toThrow('handler failed');
      const seen = await db.read({ projectId: a.id, keyKind: 'secret' }, (q) =>
        sql<{ u: string; projects: string[] }>`SELECT current_user AS u, array(SELECT DISTINCT project_id::text FROM documents) AS projects`.execute(q));
      expect(seen.rows[0]).toEqual({ u: 'plinth_api_full', projects: [a.id] });
    } finally {
      await db.close();
    }
  });

  it('a handler that swallows a database error fails (its COMMIT rolled back) and leaves no owner-role connection', async () => {
    const db = createDb(env.databaseUrl, { tenant: 1, admin: 1 });
    try {
      const swallowed = db.tenant({ projectId: a.id, keyKind: 'secret' }, async (tx) => {
        await sql`SELECT 1 / 0`.execute(tx).catch(() => {}); // the transaction is now aborted
        return 'looks fine';
      });
      await expect(swallowed).rejects.toThrow(/aborted by an earlier error and rolled back/);
      const seen = await db.read({ projectId: a.id, keyKind: 'secret' }, (q) =>
        sql<{ u: string; projects: string[] }>`SELECT current_user AS u, array(SELECT DISTINCT project_id::text FROM documents) AS projects`.execute(q));
      expect(seen.rows[0]).toEqual({ u: 'plinth_api_full', projects: [a.id] });
    } finally {
      await db.close();
    }
  });
});

