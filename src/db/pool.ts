/**
 * Connection pool, Kysely instance and the per-request tenant transaction.
 *
 * The pool connects as the database owner. Platform tables (operators, projects, the job
 * queue) are read through `db.admin`. Tenant data is only touched inside `db.tenant(...)`:
 * a transaction that switches to the `plinth_api` role (no BYPASSRLS) and carries the
 * project, user and key kind as transaction-local settings, which the row-level-security
 * policies in sql/ read. A code bug that forgets a project filter still sees only the
 * current project's rows.
 */
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { isObjectId } from '../lib/ids.js';
import type { Database } from './types.js';

export type KeyKind = 'secret' | 'publishable' | 'operator' | 'system';

export interface TenantScope {
  projectId: string;
  userId?: string | null;
  keyKind: KeyKind;
}

export type Tx = Kysely<Database>;

export interface Db {
  admin: Kysely<Database>;
  pool: pg.Pool;
  tenant<T>(scope: TenantScope, fn: (tx: Tx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

// bigint counters fit in a double; parse them as numbers rather than strings.
pg.types.setTypeParser(20, (v) => Number(v));

const KEY_KINDS = new Set<KeyKind>(['secret', 'publishable', 'operator', 'system']);

/**
 * One round trip opens the transaction, drops to the API role and sets the scope. The values
 * are inlined only after strict validation (24-hex ids, a closed set of kinds), never from raw
 * client text.
 */
export function tenantPreamble(scope: TenantScope): string {
  const userId = scope.userId ?? '';
  if (!isObjectId(scope.projectId)) throw new Error('tenant scope needs a valid project id');
  if (userId !== '' && !isObjectId(userId)) throw new Error('tenant scope has an invalid user id');
  if (!KEY_KINDS.has(scope.keyKind)) throw new Error('tenant scope has an invalid key kind');
  return (
    `BEGIN; SET LOCAL ROLE plinth_api; ` +
    `SELECT set_config('plinth.project_id', '${scope.projectId}', true), ` +
    `set_config('plinth.user_id', '${userId}', true), ` +
    `set_config('plinth.key_kind', '${scope.keyKind}', true)`
  );
}

export function createDb(databaseUrl: string, max = 20): Db {
  const pool = new pg.Pool({ connectionString: databaseUrl, max, idleTimeoutMillis: 30_000 });
  pool.on('error', () => {}); // idle-client errors surface on the next query instead
  const admin = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });

  async function tenant<T>(scope: TenantScope, fn: (tx: Tx) => Promise<T>): Promise<T> {
    const preamble = tenantPreamble(scope);
    return admin.connection().execute(async (conn) => {
      await sql.raw(preamble).execute(conn);
      try {
        const result = await fn(conn);
        await sql.raw('COMMIT').execute(conn);
        return result;
      } catch (err) {
        await sql.raw('ROLLBACK').execute(conn).catch(() => {});
        throw err;
      }
    });
  }

  return { admin, pool, tenant, close: () => admin.destroy() };
}
