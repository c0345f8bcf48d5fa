/** `plinth migrate --status`: the terminal report and the exit codes (docs/deploy.md). */
import type { MigrationStatus } from '../db/migration-status.js';

export const EXIT_DRIFT = 3;
export const EXIT_PENDING = 4;

/** The terminal report: one line per migration, drift explained, a summary last. */
export function formatStatus(s: MigrationStatus): string {
  const width = Math.max(4, ...s.migrations.map((m) => m.name.length));
  const lines = [`${'STATE'.padEnd(8)} ${'NAME'.padEnd(width)} ${'APPLIED'.padEnd(24)} CHECKSUM (SHA-256)`];
  for (const m of s.migrations) {
    const applied = m.appliedAt ? new Date(m.appliedAt).toISOString() : '-';
    const checksum = m.state === 'pending' ? m.fileChecksum : (m.recordedChecksum ?? '-');
    lines.push(`${m.state.padEnd(8)} ${m.name.padEnd(width)} ${applied.padEnd(24)} ${checksum}`);
    const pad = ' '.repeat(8 + 1 + width + 1 + 24 + 1);
    if (m.state === 'changed') lines.push(`${pad}file now: ${m.fileChecksum}  (changed after it was applied)`);
    if (m.state === 'missing') lines.push(`${pad}(applied, but this version has no such file)`);
    if (m.state === 'unknown') lines.push(`${pad}file now: ${m.fileChecksum}  (applied, but no checksum was recorded: cannot be verified)`);
  }
  const c = s.counts;
  const applied = c.ok + c.changed + c.missing + c.unknown;
  const verdict = s.drift ? `DRIFT: ${c.changed} changed, ${c.missing} missing, ${c.unknown} unknown` : s.inSync ? 'in sync' : 'run `plinth migrate` to apply them';
  lines.push('', `${applied} applied, ${c.pending} pending: ${verdict}`);
  return lines.join('\n');
}

