/**
 * After-hooks on collection changes, and how after-hooks and schedules run: as jobs (docs/functions.md "After-hooks", "Schedules"): one
 * graphile-worker job `functions.run` per (function, event), keyed `fn:<functionId>:<event>` so
 * that enqueueing the same event twice leaves one job. A job runs the function's active
 * version at that moment as nobody (a publishable caller without a user: `plinth.data.service`
 * is the way to write), and throws when the invocation fails, so graphile-worker retries it
 * with its exponential backoff (e^attempt seconds) up to MAX_ATTEMPTS. Every attempt is in the
 * invocation log; the event, and its `id`, are the same in each, for the function to
 * de-duplicate on (delivery is at least once).
 *
 * Three producers: the webhooks dispatcher's transaction for collection changes (the change
 * stream, so an after-hook sees exactly the committed writes), the auth flows' own
 * transactions for sign-up, sign-in and deletion, and the schedules' crontab job (schedules.ts).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../database.js';
import { documentView } from '../data/view.js';
import type { ChangeRow } from '../realtime/queries.js';
import { collectionHooks, enqueueRuns, type JobOf, type RunJob } from './job-queries.js';

/** The change as an after-hook sees it; the document after the change (before it, for a delete). */
export function changeEvent(row: ChangeRow): RunJob['event'] {
  const document = row.truncated
    ? null
    : documentView({ id: row.doc_id, data: row.data ?? {}, created_at_ms: row.created_ms, updated_at_ms: row.updated_ms, deleted_at_ms: row.deleted_ms });
  return {
    id: `chg_${row.id}`,
    type: row.action,
    collection: row.collection,
    documentId: row.doc_id,
    document,
    ...(row.truncated ? { truncated: true } : {}),
    at: new Date(row.at_ms).toISOString(),
  };
}

/**
 * In the dispatcher's transaction (src/modules/webhooks/dispatcher.ts): one job per change and
 * enabled after-hook of the change's project, collection and action. A hook deployed after a
 * change was written does not get it.
 */
export async function enqueueChangeHooks(tx: Kysely<Database>, rows: readonly ChangeRow[]): Promise<void> {
  if (rows.length === 0) return;
  const projects = [...new Set(rows.map((r) => r.project_id))];
  const hooks = await collectionHooks(tx, projects);
  if (hooks.length === 0) return;
  const jobs: JobOf[] = [];
  for (const row of rows) {
    const collection = row.collection.toLowerCase();
    for (const h of hooks) {
      if (h.project_id !== row.project_id || h.trigger.collection !== collection) continue;
      if (!(h.trigger.events ?? []).includes(row.action) || row.at_ms < h.created_at.getTime()) continue;
      jobs.push({
        key: `fn:${h.id}:${row.id}`,
        job: { projectId: row.project_id, functionId: h.id, kind: 'after', trigger: `after.${row.action}`, event: changeEvent(row) },
      });
    }
  }
  await enqueueRuns(tx, jobs);
}
