/**
 * The dispatcher: turns the change stream (src/modules/realtime/queries.ts) into webhook
 * deliveries. In one transaction it locks the durable cursor, reads the next final changes
 * (below the oldest running transaction, so a late commit is never skipped), inserts one
 * delivery per matching enabled endpoint, enqueues each delivery's first attempt and moves
 * the cursor: a crash before the commit leaves everything to the next run, after it nothing
 * is lost. Concurrent dispatchers skip the locked cursor, so each change is dispatched once.
 *
 * It runs as a graphile-worker crontab job (`webhooks:dispatch`, every minute) that keeps
 * dispatching for just under a minute, every DISPATCH_IDLE_MS when there is nothing to do.
 */
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../context.js';
import { objectId } from '../../lib/ids.js';
import { changeData, positionOf } from '../realtime/event.js';
import { changesAfter, type ChangeRow } from '../realtime/queries.js';
import { enqueueAttempt } from './delivery.js';
import * as q from './queries.js';

const BATCH = 500;
const DISPATCH_IDLE_MS = 250;
const RUN_FOR_MS = 55_000;

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
    await q.moveCursor(tx, positionOf(rows[rows.length - 1]!));
    return rows.length;
  });
}

export const dispatchTask = (ctx: AppContext): Task => async (_payload, helpers) => {
  const until = Date.now() + RUN_FOR_MS;
  let failing = false;
  while (Date.now() < until && !helpers.abortSignal?.aborted) {
    // A failure (the database away) is retried here at the idle pace, never by graphile-worker:
    // a retried run would overlap the next minute's, each holding a worker slot.
    const n = await dispatchBatch(ctx).then(
      (read) => ((failing = false), read),
      (err: unknown) => {
        if (!failing) ctx.log.warn({ err }, 'webhooks: cannot dispatch the change stream; retrying');
        failing = true;
        return 0;
      },
    );
    if (n < BATCH) await new Promise((r) => setTimeout(r, DISPATCH_IDLE_MS));
  }
};
