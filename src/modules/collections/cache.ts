/**
 * Collection definitions as the data API needs them, cached per node. Any change to a
 * project's collections is announced with `project_changed` on the bus; every node drops that
 * project's entries at once. While the node's bus listener is down nothing is cached (see
 * src/db/bus.ts); a short TTL is the last safety net.
 */
import type { Bus } from '../../db/bus.js';
import type { Db } from '../../db/pool.js';
import type { FieldDef } from '../../db/types.js';
import { EvictingCache } from '../../lib/evicting-cache.js';
import { findCollection } from './queries.js';
import type { CollectionRow } from './view.js';

export interface CollectionDef extends CollectionRow {
  /** Top-level declared fields by key. */
  byKey: Map<string, FieldDef>;
}

const TTL_MS = 30_000;
const MAX_ENTRIES = 20_000;

export class CollectionCache {
  /** By `projectId:lower-cased name`; a missing collection is kept too (null). */
  private entries: EvictingCache<CollectionDef | null>;

  // What it uses of the AppContext, named here: context.ts lists this cache (no import cycle).
  constructor(private ctx: { bus: Bus; db: Db }) {
    this.entries = new EvictingCache<CollectionDef | null>(TTL_MS, MAX_ENTRIES, () => ctx.bus.listening);
    ctx.bus.subscribe((e) => {
      if (e.type === 'project_changed') this.evictProject(e.id);
    });
    ctx.bus.onReset(() => this.entries.clear());
  }

  get(projectId: string, name: string): Promise<CollectionDef | null> {
    return this.entries.get(`${projectId}:${name.toLowerCase()}`, async () => {
      const row = await findCollection(this.ctx.db.admin, projectId, name);
      return row ? { ...row, byKey: new Map(row.fields.map((f) => [f.key, f])) } : null;
    });
  }

  evictProject(projectId: string): void {
    const prefix = `${projectId}:`;
    this.entries.evict((key) => key.startsWith(prefix));
  }
}

/** Tells every node that a project's collection definitions changed. */
export async function announceChange(ctx: { bus: Bus }, projectId: string): Promise<void> {
  await ctx.bus.publish({ type: 'project_changed', id: projectId });
}
