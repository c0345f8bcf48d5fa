/**
 * Which stored backups retention keeps (docs/backup.md "Retention"): the newest backup of each
 * of the `keepDaily` most recent UTC days that have one, then, among the others, the newest of
 * each of the `keepWeekly` most recent ISO weeks (Monday to Sunday, UTC) that have one. With
 * enough history that is exactly keepDaily + keepWeekly backups: a week of daily ones and a
 * month of weekly ones with the defaults (7 and 4). Pure: the caller deletes the rest.
 */
const DAY = 86_400_000;

const dayOf = (d: Date) => d.toISOString().slice(0, 10);
const weekOf = (d: Date) => dayOf(new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) - ((d.getUTCDay() + 6) % 7) * DAY));

export function backupsToKeep<T extends { id: string; created_at: Date }>(newestFirst: readonly T[], keepDaily: number, keepWeekly: number): Set<string> {
  const keep = new Set<string>();
  const days = new Set<string>();
  for (const b of newestFirst) {
    const day = dayOf(b.created_at);
    if (days.has(day)) continue;
    if (days.size >= keepDaily) break;
    days.add(day);
    keep.add(b.id);
  }
  const weeks = new Set<string>();
  for (const b of newestFirst) {
    if (keep.has(b.id) || days.has(dayOf(b.created_at))) continue;
    const week = weekOf(b.created_at);
    if (weeks.has(week)) continue;
    if (weeks.size >= keepWeekly) break;
    weeks.add(week);
    keep.add(b.id);
  }
  return keep;
}
