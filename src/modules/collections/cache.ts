/**
 * Collection definitions as the data API needs them, cached per node. Any change to a
 * project's collections is announced with `project_changed` on the bus; every node drops that
 * project's entries at once. A short TTL is the safety net if a notification is lost.
 */
import type { AppContext } from '../../context.js';
import type { FieldDef } from '../../db/types.js';
import { findCollection } from './queries.js';
import type { CollectionRow } from './view.js';

export interface CollectionDef extends CollectionRow {
  /** Top-level declared fields by key. */
  byKey: Map<string, FieldDef>;
}

interface Entry {
  def: CollectionDef | null;
  expiresAt: number;
}

const TTL_MS = 30_000;
const MAX_ENTRIES = 20_000;

export class CollectionCache {
  private entries = new Map<string, Entry>();
  /** Bumped by every eviction: a load that overlapped one may hold the old row and is not cached. */
  private generation = 0;

  constructor(private ctx: AppContext) {
    ctx.bus.subscribe((e) => {
      if (e.type === 'project_changed') this.evictProject(e.id);
    });
  }

  async get(projectId: string, name: string): Promise<CollectionDef | null> {
    const key = `${projectId}:${name.toLowerCase()}`;
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > Date.now()) return hit.def;
    const generation = this.generation;
    const row = await findCollection(this.ctx.db.admin, projectId, name);
    const def = row ? { ...row, byKey: new Map(row.fields.map((f) => [f.key, f])) } : null;
    if (generation === this.generation) this.remember(key, def);
    return def;
  }

  evictProject(projectId: string): void {
    this.generation++;
    const prefix = `${projectId}:`;
    for (const key of this.entries.keys()) if (key.startsWith(prefix)) this.entries.delete(key);
  }

  private remember(key: string, def: CollectionDef | null): void {
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(key, { def, expiresAt: Date.now() + TTL_MS });
  }
}

const caches = new WeakMap<AppContext, CollectionCache>();

/** The node's cache for this context (created, and subscribed to the bus, on first use). */
export function collectionCache(ctx: AppContext): CollectionCache {
  let c = caches.get(ctx);
  if (!c) {
    c = new CollectionCache(ctx);
    caches.set(ctx, c);
  }
  return c;
}

/** Tells every node that a project's collection definitions changed. */
export async function announceChange(ctx: AppContext, projectId: string): Promise<void> {
  await ctx.bus.publish({ type: 'project_changed', id: projectId });
}
