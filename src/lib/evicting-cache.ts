/**
 * A bounded in-memory cache with a TTL, for rows that any node may change (project keys,
 * collection definitions). Entries are dropped by `evict` when a change is announced on the
 * bus. A load that was in flight during an eviction may hold the old row: its result is
 * answered but not kept (generation counter), or it would outlive the change for a whole TTL.
 * While `live()` is false (this node cannot hear announcements: its bus listener is down) the
 * cache neither answers from nor keeps entries: every lookup goes to the database.
 */
export class EvictingCache<V> {
  private entries = new Map<string, { value: V; expiresAt: number }>();
  private generation = 0;

  constructor(private ttlMs: number, private maxEntries: number, private live: () => boolean = () => true) {}

  /** The cached value, else `load`'s: kept when `keep(value)` and no eviction ran meanwhile. */
  async get(key: string, load: () => Promise<V>, keep: (value: V) => boolean = () => true): Promise<V> {
    if (!this.live()) return load();
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > Date.now()) return hit.value;
    const generation = this.generation;
    const value = await load();
    if (generation === this.generation && this.live() && keep(value)) this.remember(key, value);
    return value;
  }

  /** Drops every entry (the node may have missed announcements). */
  clear(): void {
    this.evict(() => true);
  }

  evict(matches: (key: string, value: V) => boolean): void {
    this.generation++;
    for (const [key, e] of this.entries) if (matches(key, e.value)) this.entries.delete(key);
  }

  private remember(key: string, value: V): void {
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, { value, expiresAt: Date.now() + this.ttlMs });
  }
}
