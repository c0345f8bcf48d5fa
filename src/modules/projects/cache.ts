/**
 * Resolves an API key to its project. Lookups are cached briefly in memory; any change to a
 * project (key rotation, settings, deletion) is announced on the bus and drops the cached
 * entries on every node at once, so a rotated key fails immediately everywhere. A node whose
 * bus listener is down looks every key up in the database until it listens again.
 */
import type { Kysely } from 'kysely';
import { decrypt, sha256Hex, type Encrypted } from '../../lib/crypto.js';
import { EvictingCache } from '../../lib/evicting-cache.js';
import type { Bus } from '../../db/bus.js';
import type { Database } from '../../database.js';
import { planOf, type Plan, type PlanName } from '../plans/plans.js';
import { keyKindOf, type ApiKeyKind } from './keys.js';
import { findProjectWithOwner, type ProjectWithOwnerRow } from './queries.js';

export interface ProjectRecord {
  id: string;
  ownerId: string;
  ownerEmail: string;
  ownerVerified: boolean;
  planName: PlanName;
  plan: Plan;
  name: string;
  siteUrl: string | null;
  settings: Record<string, unknown>;
  secrets: Record<string, Encrypted>;
  /** The decrypted per-project JWT secret (memory only). */
  jwtSecret: Uint8Array;
}

interface Resolved {
  project: ProjectRecord;
  kind: ApiKeyKind;
}

const TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;

export class ProjectCache {
  /** By the key's SHA-256; unknown keys are not kept (they would crowd out real ones). */
  private byHash: EvictingCache<Resolved | null>;
  /** By project id, for flows that carry an id (functions' host calls), evicted the same way. */
  private byProjectId: EvictingCache<ProjectRecord | null>;

  constructor(private db: Kysely<Database>, private encryptionKey: Buffer, bus: Bus) {
    this.byHash = new EvictingCache<Resolved | null>(TTL_MS, MAX_ENTRIES, () => bus.listening);
    this.byProjectId = new EvictingCache<ProjectRecord | null>(TTL_MS, MAX_ENTRIES, () => bus.listening);
    bus.subscribe((e) => {
      if (e.type === 'project_changed') this.evictProject(e.id);
    });
    bus.onReset(() => {
      this.byHash.clear();
      this.byProjectId.clear();
    });
  }

  async resolveKey(rawKey: string): Promise<Resolved | null> {
    const kind = keyKindOf(rawKey);
    if (!kind) return null; // every issued key has a prefix: spare the database the lookup
    const hash = sha256Hex(rawKey);
    const column = kind === 'secret' ? 'secret_key_hash' : 'publishable_key_hash';
    return this.byHash.get(hash, async () => {
      const project = await this.load(column, hash);
      return project && { project, kind };
    }, (r) => r !== null);
  }

  /** Loads a project by id (uncached): for flows that carry a project id, not a key. */
  async byId(projectId: string): Promise<ProjectRecord | null> {
    return this.load('id', projectId);
  }

  /** A project by id, cached like a key's (a change anywhere drops it on every node). */
  async cachedById(projectId: string): Promise<ProjectRecord | null> {
    return this.byProjectId.get(projectId, () => this.load('id', projectId), (r) => r !== null);
  }

  evictProject(projectId: string): void {
    this.byHash.evict((_, r) => r?.project.id === projectId);
    this.byProjectId.evict((id) => id === projectId);
  }

  private async load(column: 'secret_key_hash' | 'publishable_key_hash' | 'id', value: string) {
    const row = await findProjectWithOwner(this.db, column, value);
    return row ? this.recordOf(row) : null;
  }

  /**
   * A project from its PROJECT_WITH_OWNER columns (projects/queries.ts): also for callers that
   * read the project in the same statement as something else (uncached, as byId).
   */
  recordOf(row: ProjectWithOwnerRow): ProjectRecord {
    const secret = decrypt(this.encryptionKey, row.jwt_secret);
    // Never an empty HMAC key: a secret that does not open is the operator's key mix-up
    // (boot refuses a wrong key; key-check.ts), a 500 with the cause in the log.
    if (secret === null) throw new Error(`project ${row.id}: its JWT secret does not open with this ENCRYPTION_KEY`);
    return {
      id: row.id,
      ownerId: row.owner_id,
      ownerEmail: row.owner_email,
      ownerVerified: row.is_verified,
      planName: row.plan,
      plan: planOf(row.plan),
      name: row.name,
      siteUrl: row.site_url,
      settings: row.settings,
      secrets: row.secrets,
      jwtSecret: new TextEncoder().encode(secret),
    } satisfies ProjectRecord;
  }
}
