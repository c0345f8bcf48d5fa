/**
 * One statement that carries its own tenant scope, in one round trip.
 *
 * Under a transaction pooler (PgBouncer `pool_mode = transaction`) a server connection belongs
 * to a client only for one transaction, so a scope set by an earlier statement may sit on
 * another server connection by the time the next one runs. Each statement of `db.read()`
 * therefore brings its scope along: the extended-protocol messages of the scope statement
 * (Bind/Execute of `SELECT set_config(…, true)…`) and of the statement itself (Parse/Bind/
 * Describe/Execute) go out together, with a single Sync. Everything up to a Sync is one
 * implicit transaction, which the pooler keeps on one server connection and which ends the
 * settings (they are `is_local`) the moment it ends: no connection, pooled or not, ever holds a
 * scope between statements. If the scope statement fails, the server skips the rest up to the
 * Sync, so the statement never runs unscoped.
 *
 * It is pg's own Query with the scope messages written first and their answers (one DataRow
 * and its CommandComplete; no RowDescription, as the scope is not described) left out of
 * the result.
 */
import pg from 'pg';

/** The wire-level connection of node-postgres (lib/connection.js), as far as it is used here. */
interface WireConnection {
  parse(msg: { text: string; name?: string; types?: unknown[] }): void;
  bind(msg: { portal?: string; statement?: string; values?: unknown[]; binary?: boolean; valueMapper?: unknown }): void;
  execute(msg: { portal?: string; rows?: number }): void;
  stream: { cork?: () => void; uncork?: () => void };
  /** Named statements this connection has parsed, and those whose Parse is on its way. */
  parsedStatements: Record<string, string>;
  submittedNamedStatements: Record<string, string>;
}

/** pg's Query as this module extends it (its handlers are not in @types/pg). */
interface QueryInternals {
  prepare(connection: WireConnection): void;
  handleDataRow(msg: unknown): void;
  handleCommandComplete(msg: unknown, connection: WireConnection): void;
}
type QueryClass = new (config: pg.QueryConfig) => pg.Query & QueryInternals;
const Query = pg.Query as unknown as QueryClass;

export interface ScopeCall {
  /** The scope statement (parameters $1…). */
  text: string;
  /** Its name when prepared statements are in use, else undefined (the unnamed statement). */
  name?: string;
  values: string[];
}

/**
 * Appended after the statement when read replicas are in use, in the same implicit
 * transaction: whether it wrote (was assigned a transaction id), so its project's reads stay on
 * the primary for a while (replicas.ts).
 */
export const WROTE_SQL = 'SELECT pg_current_xact_id_if_assigned() IS NOT NULL';

export class ScopedQuery extends Query {
  /** Which answers arrive now: the scope's, the statement's, or the write probe's. */
  private phase: 'scope' | 'statement' | 'probe' = 'scope';
  /** With `probe`: whether the statement wrote. */
  wrote = false;

  constructor(
    config: pg.QueryConfig,
    private readonly scope: ScopeCall,
    private readonly probe?: { name?: string },
  ) {
    // queryMode 'extended': even a statement without parameters goes through Parse/Bind, so
    // that it and the scope share one Sync (a simple Query message would be its own).
    super({ ...config, queryMode: 'extended' } as pg.QueryConfig);
  }

  override prepare(connection: WireConnection): void {
    const s = this.scope;
    runUnnamedPortal(connection, s.text, s.name, s.values);
    if (!this.probe) return super.prepare(connection);
    // pg's prepare ends with Sync: hold it back until the probe is written.
    const sync = (connection as unknown as { sync(): void }).sync;
    (connection as unknown as { sync(): void }).sync = () => {};
    try {
      super.prepare(connection);
    } finally {
      (connection as unknown as { sync(): void }).sync = sync;
    }
    runUnnamedPortal(connection, WROTE_SQL, this.probe.name, []);
    sync.call(connection);
  }

  override handleDataRow(msg: unknown): void {
    if (this.phase === 'statement') return super.handleDataRow(msg);
    if (this.phase === 'probe') this.wrote = (msg as { fields?: unknown[] }).fields?.[0] === 't';
  }

  override handleCommandComplete(msg: unknown, connection: WireConnection): void {
    if (this.phase === 'scope') this.phase = 'statement';
    else if (this.phase === 'statement') {
      this.phase = 'probe';
      super.handleCommandComplete(msg, connection);
    }
  }
}

/** Parse (unless this connection has `name` already), Bind and Execute, without Describe. */
function runUnnamedPortal(connection: WireConnection, text: string, name: string | undefined, values: string[]): void {
  const parsed = name !== undefined && (Object.hasOwn(connection.parsedStatements, name) || Object.hasOwn(connection.submittedNamedStatements, name));
  if (!parsed) {
    connection.parse({ text, name });
    // Static SQL that always parses: only a broken connection (discarded) stops it.
    if (name !== undefined) connection.submittedNamedStatements[name] = text;
  }
  connection.bind({ statement: name ?? '', values });
  connection.execute({ portal: '' });
}
