/**
 * The hash chain (docs/audit.md "The chain"): an entry's hash is the SHA-256 (hex) of its
 * canonical content, which includes the previous entry's hash of the same project. Canonical:
 * JSON with object keys sorted at every depth, times as ISO 8601 in UTC with milliseconds.
 * Pure; no I/O.
 */
import { createHash } from 'node:crypto';

/** The previous hash of a project's first entry. */
export const GENESIS_HASH = '0'.repeat(64);

/** What an entry's hash covers: everything it records but its row id and its own hash. */
export interface ChainedContent {
  projectId: string;
  seq: number;
  at: Date;
  operatorId: string | null;
  operatorEmail: string | null;
  ip: string | null;
  action: string;
  target: string | null;
  before: unknown;
  after: unknown;
  prevHash: string;
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value as Record<string, unknown>).sort()) out[k] = sorted((value as Record<string, unknown>)[k]);
    return out;
  }
  return value;
}

export function canonicalContent(c: ChainedContent): string {
  return JSON.stringify(
    sorted({
      v: 1,
      projectId: c.projectId,
      seq: c.seq,
      at: c.at.toISOString(),
      operatorId: c.operatorId,
      operatorEmail: c.operatorEmail,
      ip: c.ip,
      action: c.action,
      target: c.target,
      before: c.before ?? null,
      after: c.after ?? null,
      prevHash: c.prevHash,
    }),
  );
}

export function entryHash(c: ChainedContent): string {
  return createHash('sha256').update(canonicalContent(c)).digest('hex');
}
