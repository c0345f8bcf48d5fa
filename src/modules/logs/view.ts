/** Request log rows → the dashboard's wire shape. */
import type { Selectable } from 'kysely';
import type { RequestLogsTable } from './tables.js';

type Row = Pick<Selectable<RequestLogsTable>, 'id' | 'at' | 'method' | 'route' | 'status' | 'duration_ms' | 'code' | 'user_id'>;

export function requestView(r: Row) {
  return {
    id: r.id,
    at: new Date(r.at).toISOString(),
    method: r.method,
    route: r.route,
    status: r.status,
    durationMs: Math.round(r.duration_ms * 10) / 10,
    code: r.code,
    userId: r.user_id,
  };
}

/** The cursor of the next page: the last row's time (ms) and id. */
export function cursorOf(r: Row): string {
  return `${new Date(r.at).getTime()}.${r.id}`;
}

export function parseCursor(cursor: string): { at: Date; id: string } {
  const dot = cursor.indexOf('.');
  return { at: new Date(Number(cursor.slice(0, dot))), id: cursor.slice(dot + 1) };
}
