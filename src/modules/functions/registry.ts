/**
 * A project's functions as a node runs them, cached per node like the collection definitions:
 * any change (a deploy, a rollback, a secret) is announced with `project_changed` on the bus and
 * every node drops that project's entry at once (src/db/bus.ts). Secrets are decrypted here,
 * once per entry, and handed to invocations as `plinth.env`; they never leave the node otherwise.
 */
import type { Bus } from '../../db/bus.js';
import type { Db } from '../../db/pool.js';
import { decrypt } from '../../lib/crypto.js';
import { EvictingCache } from '../../lib/evicting-cache.js';
import { activeFunctions, secretValues, type ActiveFunctionRow } from './queries.js';

const TTL_MS = 30_000;
const MAX_PROJECTS = 5_000;

export interface ProjectFunctions {
  byName: Map<string, ActiveFunctionRow>;
  all: ActiveFunctionRow[];
  /** Enabled before-hooks by `collection:event`, in name order (the order they run in). */
  before: Map<string, ActiveFunctionRow[]>;
}

const NO_HOOKS: ActiveFunctionRow[] = [];

function beforeIndex(all: ActiveFunctionRow[]): Map<string, ActiveFunctionRow[]> {
  const index = new Map<string, ActiveFunctionRow[]>();
  for (const f of [...all].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (f.kind !== 'before' || !f.enabled) continue;
    const events = Array.isArray(f.trigger.events) ? f.trigger.events : [];
    for (const e of events) {
      const key = `${String(f.trigger.collection)}:${String(e)}`;
      index.set(key, [...(index.get(key) ?? []), f]);
    }
  }
  return index;
}

export class FunctionRegistry {
  #entries: EvictingCache<ProjectFunctions>;
  /** Secrets apart: every write asks for the definitions (its before-hooks), only a run needs them. */
  #env: EvictingCache<Record<string, string>>;

  constructor(private ctx: { bus: Bus; db: Db; encryptionKey: Buffer }) {
    this.#entries = new EvictingCache<ProjectFunctions>(TTL_MS, MAX_PROJECTS, () => ctx.bus.listening);
    this.#env = new EvictingCache<Record<string, string>>(TTL_MS, MAX_PROJECTS, () => ctx.bus.listening);
    ctx.bus.subscribe((e) => {
      if (e.type !== 'project_changed') return;
      this.#entries.evict((key) => key === e.id);
      this.#env.evict((key) => key === e.id);
    });
    ctx.bus.onReset(() => {
      this.#entries.clear();
      this.#env.clear();
    });
  }

  get(projectId: string): Promise<ProjectFunctions> {
    return this.#entries.get(projectId, async () => {
      const all = await activeFunctions(this.ctx.db.admin, projectId);
      return { byName: new Map(all.map((f) => [f.name, f])), all, before: beforeIndex(all) };
    });
  }

  /** `plinth.env`: the project's secrets, decrypted once per entry. */
  env(projectId: string): Promise<Record<string, string>> {
    return this.#env.get(projectId, async () => {
      const env: Record<string, string> = Object.create(null);
      for (const s of await secretValues(this.ctx.db.admin, projectId)) {
        const value = decrypt(this.ctx.encryptionKey, s.value);
        if (value !== null) env[s.name] = value;
      }
      return env;
    });
  }

  /** The before-hooks of a collection's create, update or delete (none: one map lookup). */
  async beforeHooks(projectId: string, collection: string, event: 'create' | 'update' | 'delete'): Promise<ActiveFunctionRow[]> {
    const { before } = await this.get(projectId);
    return before.size === 0 ? NO_HOOKS : (before.get(`${collection.toLowerCase()}:${event}`) ?? NO_HOOKS);
  }

  /** The enabled functions of one kind whose trigger matches. */
  async matching(projectId: string, kind: ActiveFunctionRow['kind'], match: (trigger: Record<string, unknown>) => boolean): Promise<ActiveFunctionRow[]> {
    const { all } = await this.get(projectId);
    return all.filter((f) => f.enabled && f.kind === kind && match(f.trigger)).sort((a, b) => (a.name < b.name ? -1 : 1));
  }
}
