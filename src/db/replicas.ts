/**
 * Read replicas: which lag-tolerant read may go to a streaming standby, and read-your-writes.
 *
 * Each replica is polled (`pollMs`): its replay position, and its lag, measured as the time
 * since the last transaction it replayed committed on the primary whenever it has not replayed
 * everything the primary has written (0 when it has). A replica serves a read only when it
 * answered its last poll, lags at most `maxLagMs`, and has replayed the reader's own writes:
 *
 * - a client that sends the `Plinth-Commit-Position` a write answered with (an LSN) reads on a
 *   replica only once that replica's replay position has reached it;
 * - every write (a tenant transaction or statement that was assigned a transaction id) marks
 *   its project for `afterWriteMs`: its lag-tolerant reads stay on the primary meanwhile, on
 *   this node at once and on the others through the bus (`project_wrote`, sent before the
 *   write's response leaves, at most once per half window and project), so the published SDK,
 *   which sends no header, still reads its writes on any node.
 *
 * A read a replica fails for a reason the primary would not have (unreachable, shutting down,
 * cancelled for a recovery conflict) runs again on the primary, without an error; an
 * unreachable replica serves nothing until a poll finds it back.
 */
import pg from 'pg';

/** The response header after a write, and the request header a client sends it back in. */
export const COMMIT_POSITION_HEADER = 'plinth-commit-position';
import { isDatabaseUnavailable, sqlState } from './errors.js';

export interface ReplicaOptions {
  /** A replica further behind serves nothing. */
  maxLagMs: number;
  /** How long a project's reads stay on the primary after its write. */
  afterWriteMs: number;
  /** How often each replica's position is polled. */
  pollMs?: number;
}

export interface ReplicaState {
  name: string;
  pool: pg.Pool;
  /** Answered its last poll. */
  up: boolean;
  /** Replay lag in ms (Infinity when unknown). */
  lagMs: number;
  /** Replayed WAL position (as a number of bytes). */
  replayed: bigint;
}

export interface ReplicaStats {
  replicas: Array<{ name: string; up: boolean; lagSeconds: number | null }>;
  /** Lag-tolerant reads served, by where: replica or primary (and why). */
  reads: Record<'replica' | 'primary_written' | 'primary_position' | 'primary_lag' | 'primary_fallback' | 'primary_none', number>;
}

/** "16/B374D848" → bytes; null for anything else. */
export function parseLsn(text: string | null | undefined): bigint | null {
  const m = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text ?? '');
  return m ? (BigInt('0x' + m[1]) << 32n) + BigInt('0x' + m[2]) : null;
}

export function formatLsn(n: bigint): string {
  return `${(n >> 32n).toString(16).toUpperCase()}/${(n & 0xffffffffn).toString(16).toUpperCase()}`;
}

/** SQLSTATE 40001 with this wording, or 57P04 (database dropped on the primary). */
export function isRecoveryConflict(err: unknown): boolean {
  const state = sqlState(err);
  if (state === '57P04') return true;
  return state === '40001' && /conflict with recovery/i.test(String((err as { message?: unknown }).message ?? ''));
}

const POLL_SQL = `SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS replayed,
  pg_last_wal_receive_lsn()::text AS received,
  extract(epoch FROM now() - pg_last_xact_replay_timestamp()) * 1000 AS since_ms`;

export class Replicas {
  readonly list: ReplicaState[];
  private readonly marks = new Map<string, { until: number; position: bigint }>();
  private readonly announced = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private next = 0;
  private inflight: Promise<bigint | null> | null = null;
  private queued: Promise<bigint | null> | null = null;
  /** Where the primary's WAL was at the last poll. */
  private primaryAt: bigint = 0n;
  readonly counts: ReplicaStats['reads'] = { replica: 0, primary_written: 0, primary_position: 0, primary_lag: 0, primary_fallback: 0, primary_none: 0 };
  /** Told about this node's writes (the bus tells the other nodes). */
  announce: (projectId: string, position: string | null) => Promise<void> = async () => {};

  constructor(
    urls: string[],
    makePool: (url: string) => pg.Pool,
    private readonly primary: pg.Pool,
    readonly options: ReplicaOptions,
  ) {
    this.list = urls.map((url, i) => ({ name: replicaName(url, i), pool: makePool(url), up: false, lagMs: Infinity, replayed: 0n }));
    const pollMs = options.pollMs ?? 500;
    void this.poll();
    this.timer = setInterval(() => void this.poll(), pollMs);
    this.timer.unref();
  }

  /** Polls every replica once (also the first time, before any read is routed). */
  async poll(): Promise<void> {
    const at = await this.primary.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn').then(
      (r) => parseLsn(r.rows[0]?.lsn),
      () => null,
    );
    if (at !== null) this.primaryAt = at;
    await Promise.all(this.list.map((r) => this.pollOne(r)));
  }

  private async pollOne(r: ReplicaState): Promise<void> {
    try {
      const { rows } = await r.pool.query<{ standby: boolean; replayed: string | null; since_ms: number | null }>(POLL_SQL);
      const row = rows[0]!;
      const replayed = parseLsn(row.replayed);
      if (!row.standby || replayed === null) throw new Error('not a streaming standby');
      r.replayed = replayed;
      // Caught up with what the primary had written at this poll: no lag. Else the time since
      // the last replayed commit (an upper bound; Infinity before any was replayed).
      r.lagMs = replayed >= this.primaryAt ? 0 : row.since_ms === null ? Infinity : Math.max(0, Number(row.since_ms));
      r.up = true;
    } catch {
      r.up = false;
      r.lagMs = Infinity;
    }
  }

  /**
   * The replica a lag-tolerant read of `projectId` may use, or why the primary serves it.
   * `after`: the client's commit position token (or undefined).
   */
  choose(projectId: string, after: string | undefined): ReplicaState | keyof ReplicaStats['reads'] {
    if (this.list.length === 0) return 'primary_none';
    // A mark past its window stays: its position is still the project's latest write's, which
    // positionOf answers (a function's read between its write and its response must not lose it).
    const mark = this.marks.get(projectId);
    if (mark && mark.until > Date.now()) return 'primary_written';
    const position = after ? parseLsn(after) : null;
    let reason: keyof ReplicaStats['reads'] = 'primary_lag';
    for (let i = 0; i < this.list.length; i++) {
      const r = this.list[(this.next + i) % this.list.length]!;
      if (!r.up || r.lagMs > this.options.maxLagMs) continue;
      if (position !== null && r.replayed < position) {
        reason = 'primary_position';
        continue;
      }
      this.next = (this.next + i + 1) % this.list.length;
      return r;
    }
    return reason;
  }

  /** A replica failed a read: the primary serves it; an unreachable one serves nothing until polled back. */
  failed(r: ReplicaState, err: unknown): boolean {
    if (isDatabaseUnavailable(err)) {
      r.up = false;
      return true;
    }
    return isRecoveryConflict(err);
  }

  /** `projectId` wrote: mark it here, learn the commit position, tell the other nodes. */
  async wrote(projectId: string): Promise<void> {
    const position = await this.positionAfterNow();
    this.mark(projectId, position);
    const now = Date.now();
    const last = this.announced.get(projectId);
    if (last !== undefined && now - last < this.options.afterWriteMs / 2) return;
    if (this.announced.size > 10_000) this.announced.clear();
    this.announced.set(projectId, now);
    // Sent before the write's response leaves: PostgreSQL hands it to the other nodes' listeners at once.
    await this.announce(projectId, position === null ? null : formatLsn(position)).catch(() => {});
  }

  /** Another node's write (from the bus). */
  mark(projectId: string, position: bigint | null): void {
    const m = this.marks.get(projectId);
    const until = Date.now() + this.options.afterWriteMs;
    const p = position ?? m?.position ?? 0n;
    this.marks.set(projectId, { until, position: m && m.position > p ? m.position : p });
    if (this.marks.size > 50_000) {
      const now = Date.now();
      for (const [k, v] of this.marks) if (v.until <= now) this.marks.delete(k);
    }
  }

  /** The latest write position this node knows for `projectId` (the response header), or null. */
  positionOf(projectId: string): string | null {
    const m = this.marks.get(projectId);
    return m && m.position > 0n ? formatLsn(m.position) : null;
  }

  /**
   * The primary's WAL insert position, read after this call began (so past any commit that
   * finished before it): concurrent callers share one query.
   */
  private positionAfterNow(): Promise<bigint | null> {
    if (!this.inflight) return this.fetchPosition();
    // One is running, but it may have started before our commit: share the next one.
    return (this.queued ??= this.inflight.then(() => {
      this.queued = null;
      return this.fetchPosition();
    }));
  }

  private fetchPosition(): Promise<bigint | null> {
    const run = this.primary.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn').then(
      (r) => parseLsn(r.rows[0]?.lsn),
      () => null,
    );
    this.inflight = run;
    void run.finally(() => {
      if (this.inflight === run) this.inflight = null;
    });
    return run;
  }

  stats(): ReplicaStats {
    return {
      replicas: this.list.map((r) => ({ name: r.name, up: r.up, lagSeconds: r.up && Number.isFinite(r.lagMs) ? r.lagMs / 1000 : null })),
      reads: { ...this.counts },
    };
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.list.map((r) => r.pool.end().catch(() => {})));
  }
}

/** host:port of a replica URL (no credentials): its label in metrics. */
function replicaName(url: string, i: number): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || 5432}`;
  } catch {
    return `replica-${i + 1}`;
  }
}
