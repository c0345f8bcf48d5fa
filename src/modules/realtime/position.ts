/**
 * A place in the change stream: the writer's transaction id and the row id (migrations/022).
 * Events carry it as their SSE id, `<xid>-<id>`, so `Last-Event-ID` resumes exactly there.
 */
export interface Position {
  xid: bigint;
  id: bigint;
}

export const ORIGIN: Position = { xid: 0n, id: 0n };

export function compare(a: Position, b: Position): number {
  if (a.xid !== b.xid) return a.xid < b.xid ? -1 : 1;
  if (a.id !== b.id) return a.id < b.id ? -1 : 1;
  return 0;
}

export const after = (a: Position, b: Position) => compare(a, b) > 0;

export function formatPosition(p: Position): string {
  return `${p.xid}-${p.id}`;
}

const FORMAT = /^(\d{1,20})-(\d{1,19})$/;
const XID8_MAX = 2n ** 64n - 1n;
const INT8_MAX = 2n ** 63n - 1n;

/** The position of an event id, or null when it is not one of ours (malformed or out of range). */
export function parsePosition(raw: string | undefined | null): Position | null {
  const m = raw ? FORMAT.exec(raw.trim()) : null;
  if (!m) return null;
  const p = { xid: BigInt(m[1]!), id: BigInt(m[2]!) };
  return p.xid <= XID8_MAX && p.id <= INT8_MAX ? p : null;
}
