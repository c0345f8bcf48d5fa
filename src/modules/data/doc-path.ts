/**
 * A document's value at a path of keys (`["address", "city"]` for `address.city`), read in
 * memory the way PostgreSQL's `data #> '{address,city}'` reads an object path: only objects are
 * walked (an array on the way gives no value), only a document's own keys count (never
 * `__proto__` or an inherited member). Shared by the in-memory rule evaluator
 * (rules/evaluate.ts) and realtime's subscription filters (realtime/match.ts).
 */
export function valueAtPath(data: Record<string, unknown>, path: readonly string[]): unknown {
  let v: unknown = data;
  for (const key of path) {
    if (v === null || typeof v !== 'object' || Array.isArray(v) || !Object.hasOwn(v, key)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}
