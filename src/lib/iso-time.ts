/**
 * `new Date(ms).toISOString()`, about eight times faster for the timestamps a page of documents
 * carries (two or three per document: ~0.35 µs each with `toISOString`, 14 µs of CPU for a
 * 20-document page). The date part is computed once per day and kept (documents of one page
 * mostly share a few days); the time of day is integer arithmetic and table lookups. Years
 * outside 0000–9999, which `toISOString` writes with a sign and six digits, go to it.
 */
const DAY_MS = 86_400_000;
const MAX_DAYS_KEPT = 4096;
const TWO_DIGITS = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));

/** `YYYY-MM-DDT` by day number since the epoch. */
const dayPrefixes = new Map<number, string>();

function dayPrefix(day: number): string | null {
  let prefix = dayPrefixes.get(day);
  if (prefix === undefined) {
    const full = new Date(day * DAY_MS).toISOString();
    if (full.length !== 24) return null;
    prefix = full.slice(0, 11);
    if (dayPrefixes.size >= MAX_DAYS_KEPT) dayPrefixes.clear();
    dayPrefixes.set(day, prefix);
  }
  return prefix;
}

/** The ISO 8601 form of an epoch-milliseconds instant, exactly as `Date.prototype.toISOString` writes it. */
export function isoFromMs(ms: number): string {
  const day = Math.floor(ms / DAY_MS);
  const prefix = Number.isInteger(ms) ? dayPrefix(day) : null;
  if (prefix === null) return new Date(ms).toISOString();
  let rest = ms - day * DAY_MS;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  return `${prefix}${TWO_DIGITS[hours]}:${TWO_DIGITS[minutes]}:${TWO_DIGITS[seconds]}.${THREE_DIGITS[rest - seconds * 1000]}Z`;
}
