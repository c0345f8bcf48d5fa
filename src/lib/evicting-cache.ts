/**
 * A bounded in-memory cache with a TTL, for rows that any node may change (project keys,
 * collection definitions). Entries are dropped by `evict` when a change is announced on the
 * bus. A load that was in flight during an eviction may hold the old row: its result is
 * answered but not kept (generation counter), or it would outlive the change for a whole TTL.
 * While `live()` is false (this node cannot hear announcements: its bus listener is down) the
 * cache neither answers from nor keeps entries: every lookup goes to the database.
 * Bounded and expired by lru-cache (least recently used out first).
 */
import { LRUCache } from 'lru-cache';

export class EvictingCache<V> {
  // lru-cache keeps `null` answers ("no such project") too: it stores values in a box.
  private entries: LRUCache<string, { value: V }>;
  private generation = 0;

  constructor(ttlMs: number, maxEntries: number, private live: () => boolean = () => true) {
    this.entries = new LRUCache({ max: maxEntries, ttl: ttlMs });
  }

  /** The cached value, else `load`'s: kept when `keep(value)` and no eviction ran meanwhile. */
  async get(key: string, load: () => Promise<V>, keep: (value: V) => boolean = () => true): Promise<V> {
    if (!this.live()) return load();
    const hit = this.entries.get(key);
    if (hit) return hit.value;
    const generation = this.generation;
    const value = await load();
    if (generation === this.generation && this.live() && keep(value)) this.entries.set(key, { value });
    return value;
  }

  /** Drops every entry (the node may have missed announcements). */
  clear(): void {
    this.evict(() => true);
  }

  evict(matches: (key: string, value: V) => boolean): void {
    this.generation++;
    for (const [key, e] of this.entries.entries()) if (matches(key, e.value)) this.entries.delete(key);
  }
}
