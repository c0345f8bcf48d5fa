/** Audit entries → the dashboard's wire shape (list, export). */
import type { EntryRow } from './queries.js';

export function entryView(r: EntryRow) {
  return {
    id: String(r.id),
    seq: Number(r.seq),
    at: new Date(r.at).toISOString(),
    operator: { id: r.operator_id, email: r.operator_email },
    ip: r.ip,
    action: r.action,
    target: r.target,
    before: r.before ?? null,
    after: r.after ?? null,
    prevHash: r.prev_hash,
    hash: r.hash,
  };
}

export type EntryView = ReturnType<typeof entryView>;
