/**
 * API nodes and workers starting at once on a fresh database: every one of them migrates
 * (graphile-worker's schema, ours, sql/) and none fails on another's half-made schema
 * (`duplicate key … pg_namespace_nspname_index` when graphile-worker's migrations ran outside
 * our advisory lock).
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { onServer, serverUrl } from '../helpers/server-db.js';
import { prepareDatabase } from '../../src/boot.js';

const NAME = `mig_conc_${process.pid}_${Date.now().toString(36)}`;

afterAll(() => onServer(`DROP DATABASE IF EXISTS ${NAME} WITH (FORCE)`));

describe('concurrent start-up migrations', () => {
  it('five processes migrating one fresh database at once all succeed, and the schema is complete', async () => {
    await onServer(`CREATE DATABASE ${NAME} TEMPLATE template0`);
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => prepareDatabase(serverUrl(NAME))));
    expect(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
    const client = new pg.Client({ connectionString: serverUrl(NAME) });
    await client.connect();
    try {
      const schemas = await client.query(`SELECT nspname FROM pg_namespace WHERE nspname IN ('graphile_worker') ORDER BY 1`);
      expect(schemas.rows.map((r) => r.nspname)).toEqual(['graphile_worker']);
      const jobs = await client.query(`SELECT to_regclass('graphile_worker.jobs') IS NOT NULL AS ok`);
      expect(jobs.rows[0].ok).toBe(true);
      const ours = await client.query(`SELECT count(*)::int AS n FROM pgmigrations`);
      expect(ours.rows[0].n).toBeGreaterThan(0);
    } finally {
      await client.end();
    }
  });
});
