/**
 * The dispatcher: turns the change stream (src/modules/realtime/queries.ts) into webhook
 * deliveries. In one transaction it locks the durable cursor, reads the next final changes
 * (below the oldest running transaction, so a late commit is never skipped), inserts one
 * delivery per matching enabled endpoint, enqueues each delivery's first attempt and moves
 * the cursor: a crash before the commit leaves everything to the next run, after it nothing
 * is lost. Concurrent dispatchers skip the locked cursor, so each change is dispatched once.
 *
 * It runs as a loop in every process that runs jobs (`startDispatcher`, from src/main.ts and
 * src/worker/main.ts), from the moment the process starts: a change is dispatched within
 * DISPATCH_IDLE_MS of becoming final, also right after a start (a crontab job would wait for
 * the next whole minute, and pause between its runs). The crontab job `webhooks:dispatch`
 * (every minute) only drains what is there, once: a safety net that costs one short job.
 */
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../context.js';
import { objectId } from '../../lib/ids.js';
import { changeData, positionOf } from '../realtime/event.js';
import { changesAfter, type ChangeRow } from '../realtime/queries.js';
import { enqueueChangeHooks } from '../functions/hook-jobs.js';
import { enqueueAttempt } from './delivery.js';
import * as q from './queries.js';

const BATCH = 500;
const DISPATCH_IDLE_MS = 250;
const DRAIN_MS = 10_000;
const STOP_WAIT_MS = 5000;

export function payloadOf(row: ChangeRow): Record<string, unknown> {
  return { type: `document.${row.action}`, timestamp: new Date(row.at_ms).toISOString(), data: changeData(row) };
}

function wants(e: q.EndpointRow, row: ChangeRow): boolean {
  return (
    e.project_id === row.project_id &&
    row.at_ms >= new Date(e.created_at).getTime() &&
    (e.events.length === 0 || e.events.includes(row.action)) &&
    (e.collections.length === 0 || e.collections.includes(row.collection.toLowerCase()))
  );
}

/** Dispatches the next batch of changes; how many changes it read (0: none, or another dispatcher runs). */
export async function dispatchBatch(ctx: AppContext): Promise<number> {
  return ctx.db.admin.transaction().execute(async (tx) => {
    const cursor = await q.lockCursor(tx);
    if (!cursor) return 0;
    const rows = await changesAfter(tx, cursor, BATCH);
    if (rows.length === 0) return 0;
    const endpoints = await q.enabledEndpoints(tx, [...new Set(rows.map((r) => r.project_id))]);
    const deliveries: q.NewDelivery[] = [];
    for (const row of rows) {
      for (const e of endpoints) {
        if (!wants(e, row)) continue;
        deliveries.push({ id: `msg_${objectId()}`, endpointId: e.id, projectId: row.project_id, eventType: `document.${row.action}`, payload: payloadOf(row) });
      }
    }
    await q.insertDeliveries(tx, deliveries);
    for (const d of deliveries) await enqueueAttempt(ctx, d.id, undefined, tx);
    // the projects' after-hooks on these changes (docs/functions.md "After-hooks"), in the same transaction
    await enqueueChangeHooks(tx, rows);
    await q.moveCursor(tx, positionOf(rows[rows.length - 1]!));
    return rows.length;
  });
}

/** One batch, a failure (the database away) logged once per outage and counted as nothing read. */
function guardedBatch(ctx: AppContext, state: { failing: boolean }): Promise<number> {
  return dispatchBatch(ctx).then(
    (read) => ((state.failing = false), read),
    (err: unknown) => {
      if (!state.failing) ctx.log.warn({ err }, 'webhooks: cannot dispatch the change stream; retrying');
      state.failing = true;
      return 0;
    },
  );
}

export interface Dispatcher {
  /** Ends the loop after the batch in progress (waiting for it at most STOP_WAIT_MS). */
  stop(): Promise<void>;
}

/**
 * Dispatches until stopped: batch after batch while there is a backlog, every DISPATCH_IDLE_MS
 * when there is none. Several processes may run it: one works while the others skip the locked
 * cursor. A failure is retried at the idle pace, so a database outage ends by itself.
 */
export function startDispatcher(ctx: AppContext): Dispatcher {
  let stopped = false;
  let wake: () => void = () => {};
  const state = { failing: false };
  const loop = (async () => {
    while (!stopped) {
      if ((await guardedBatch(ctx, state)) >= BATCH || stopped) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, DISPATCH_IDLE_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  })();
  return {
    async stop() {
      stopped = true;
      wake();
      // a batch stuck on an unreachable database must not hold the shutdown: its transaction
      // rolls back when the pool closes, and the next dispatcher redoes it
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([loop, new Promise((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS)))]);
      clearTimeout(timer);
    },
  };
}

/**
 * The crontab job: drains the backlog once and returns (at most DRAIN_MS), never holding a
 * worker slot for long. A failure is not retried by graphile-worker: the next minute's run and
 * the loops do it.
 */
export const dispatchTask = (ctx: AppContext): Task => async (_payload, helpers) => {
  const until = Date.now() + DRAIN_MS;
  const state = { failing: false };
  while (Date.now() < until && !helpers.abortSignal?.aborted) {
    if ((await guardedBatch(ctx, state)) < BATCH) return;
  }
};
