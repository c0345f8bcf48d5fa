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

export class ScopedQuery extends Query {
  private scopeDone = false;

  constructor(
    config: pg.QueryConfig,
    private readonly scope: ScopeCall,
  ) {
    // queryMode 'extended': even a statement without parameters goes through Parse/Bind, so
    // that it and the scope share one Sync (a simple Query message would be its own).
    super({ ...config, queryMode: 'extended' } as pg.QueryConfig);
  }

  override prepare(connection: WireConnection): void {
    const s = this.scope;
    const parsed = s.name !== undefined && (Object.hasOwn(connection.parsedStatements, s.name) || Object.hasOwn(connection.submittedNamedStatements, s.name));
    if (!parsed) {
      connection.parse({ text: s.text, name: s.name });
      // It is the first message of the pipeline: only a broken connection (discarded) stops it.
      if (s.name !== undefined) connection.submittedNamedStatements[s.name] = s.text;
    }
    connection.bind({ statement: s.name ?? '', values: s.values });
    connection.execute({ portal: '' });
    super.prepare(connection);
  }

  override handleDataRow(msg: unknown): void {
    if (this.scopeDone) super.handleDataRow(msg);
  }

  override handleCommandComplete(msg: unknown, connection: WireConnection): void {
    if (this.scopeDone) return super.handleCommandComplete(msg, connection);
    this.scopeDone = true;
  }
}
