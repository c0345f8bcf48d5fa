/** Parses "15m", "7d", "1h", "30s" or a bare number of seconds into seconds; null when malformed. */
export function parseDuration(text: string): number | null {
  const m = /^(\d+)\s*(s|m|h|d)?$/.exec(text.trim());
  if (!m) return null;
  const unit = { s: 1, m: 60, h: 3600, d: 86400 }[(m[2] ?? 's') as 's'];
  return Number(m[1]) * unit;
}
