/**
 * The invocation log's writer: each node buffers its invocations' outcomes and logs and writes
 * them in one INSERT every half second (or at 200 rows), never in an invocation's path. Lost
 * only if the node dies in between; the log is for operators, not a ledger.
 */
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../../database.js';
import { insertInvocations, type NewInvocation } from './queries.js';

const FLUSH_MS = 500;
const FLUSH_ROWS = 200;
const MAX_BUFFERED = 10_000;

export class InvocationLog {
  #rows: NewInvocation[] = [];
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();

  constructor(
    private db: Kysely<Database>,
    private log: Logger,
  ) {}

  record(row: NewInvocation): void {
    if (this.#rows.length >= MAX_BUFFERED) return; // the database is away: keep serving, drop the log
    this.#rows.push(row);
    if (this.#rows.length >= FLUSH_ROWS) void this.flush();
    else this.#timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
  }

  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const rows = this.#rows.splice(0);
    this.#flushing = this.#flushing.then(() =>
      insertInvocations(this.db, rows).catch((err: unknown) => this.log.warn({ err, rows: rows.length }, 'function invocation log not written')),
    );
    return this.#flushing;
  }
}
