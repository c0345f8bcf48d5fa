/**
 * Who may do what on a collection (docs/wire-compatibility.md §3 and §4.5, docs/security.md).
 * The checks here give the exact statuses and messages; the same rules are enforced again by
 * the PostgreSQL policies, using the scope this returns.
 */
import { COMMIT_POSITION_HEADER } from '../../db/replicas.js';
import type { FastifyRequest } from 'fastify';
import { sql, type RawBuilder } from 'kysely';
import type { AppContext } from '../../context.js';
import type { TenantScope } from '../../db/pool.js';
import { projectOf } from '../projects/api-key-auth.js';
import { RequestAuthErrors } from '../../lib/identity/request-errors.js';
import { optionalUser, type TokenUser } from '../auth/user-auth.js';
import { mfaPolicyOf } from '../mfa/policy.js';
import type { CollectionDef } from '../collections/cache.js';
import { DataErrors } from './errors.js';
import type { Scope } from './queries.js';
import { readRules, writeRules } from '../rules/has-rules.js';
import { hasHidden, hasOwnerHidden } from '../collections/protection.js';

export { readRules, writeRules };

export interface Access {
  scope: TenantScope;
  secret: boolean;
  /** The signed-in end user (publishable-key requests only). */
  userId: string | null;
  /** Private reads with the publishable key: restrict to this owner. */
  ownerFilter: string | null;
  /**
   * The collection's access rules decide (docs/rules.md), in its partition's policies: the
   * owner checks below step aside, writes go to the partition, and a refusal is rule_denied.
   */
  rules?: boolean;
  /** Writes made by a function's own plinth.data: how many hooks deep (their before-hooks stop at a depth). */
  hookDepth?: number;
  /** An operator's import that opted out of the collection's before-hooks. */
  skipHooks?: boolean;
  /**
   * Reads only: the client's commit position token (Plinth-Commit-Position), so a read replica
   * serves it only once it has replayed that far (docs/scaling.md, "Read replicas").
   */
  after?: string;
}

/**
 * The `list` rule as a list condition, when `view` (the SELECT policy) is also set and differs:
 * SQL the server compiled and stored (collections.rules_sql), never client text.
 */
export function listRuleCondition(col: CollectionDef, access: Access): RawBuilder<unknown> | null {
  const r = col.rules_sql;
  if (!access.rules || !r?.list || !r.view || r.list === r.view) return null;
  return sql.raw(`(${r.list})`);
}

/**
 * Who is asking, however they reached the data: a request with an API key, or a function
 * acting for one (src/modules/functions). Every access decision below is made from this, once.
 */
export interface Caller {
  projectId: string;
  keyKind: 'secret' | 'publishable';
  /**
   * The signed-in end user, verified (a token below the assurance the project requires is
   * refused), with their token's custom claims (what rules read as `@auth.claims.*`).
   */
  user(): Promise<TokenUser | null>;
  /**
   * Whether a token the caller carries must be judged even where anyone may read: under
   * mfaPolicy "require", below aal2 is 403 on every data request that carries one.
   */
  judgesToken(): boolean;
}

/** The caller of a data request: its key, and its Bearer token verified only when a decision needs it. */
export function requestCaller(ctx: AppContext, req: FastifyRequest): Caller {
  return {
    projectId: projectOf(req).id,
    keyKind: req.keyKind === 'secret' ? 'secret' : 'publishable',
    user: () => optionalUser(ctx, req),
    judgesToken: () => req.headers.authorization !== undefined && mfaPolicyOf(projectOf(req)) === 'require',
  };
}

/**
 * A rules caller: signed in or not (the rules say whether that matters), with the token's
 * custom claims in the scope when it has any (`@auth.claims.*`; none: the scope is as before).
 */
async function rulesAccess(caller: Caller): Promise<Access> {
  const user = await caller.user();
  return { scope: userScope(caller.projectId, user), secret: false, userId: user?.id ?? null, ownerFilter: null, rules: true };
}

/**
 * A publishable scope for the signed-in user (or nobody), carrying their token's claims when it
 * has any: every statement of it may reach a ruled collection (a lookup, a populate, a rule of
 * another collection), whose policies read `@auth.claims.*`. Without claims the scope is as it
 * always was (no setting more).
 */
function userScope(projectId: string, user: TokenUser | null): TenantScope {
  const scope: TenantScope = { projectId, userId: user?.id ?? null, keyKind: 'publishable' };
  if (user?.claims) scope.claims = user.claims;
  return scope;
}

export function assertNotUsers(name: string): void {
  if (name.trim().toLowerCase() === 'users') throw DataErrors.users_collection_protected();
}

/**
 * `populate`: the read populates references, whose target collections may have read rules on
 * `@auth.id` or owner-hidden fields: then the caller's user id goes into the scope even where
 * this collection's own reads do not need it.
 */
export async function readAccess(ctx: AppContext, req: FastifyRequest, col: CollectionDef, opts: { populate?: boolean } = {}): Promise<Access> {
  const access = await callerReadAccess(requestCaller(ctx, req), col, opts);
  const after = req.headers[COMMIT_POSITION_HEADER];
  if (typeof after === 'string' && after.length <= 20) access.after = after;
  return access;
}

export async function callerReadAccess(caller: Caller, col: CollectionDef, opts: { populate?: boolean } = {}): Promise<Access> {
  const { projectId } = caller;
  if (caller.keyKind === 'secret') return { scope: { projectId, keyKind: 'secret' }, secret: true, userId: null, ownerFilter: null };
  if (readRules(col)) return rulesAccess(caller);
  const isPrivate = col.rls.enabled && col.rls.mode === 'private';
  // Owner-hidden fields (docs/rules.md) come back to their owner: who is asking matters.
  if (!isPrivate && (opts.populate || hasOwnerHidden(col.fields))) {
    // Populated collections may have rules of their own: they read the same scope.
    const user = await caller.user();
    return { scope: userScope(projectId, user), secret: false, userId: user?.id ?? null, ownerFilter: null };
  }
  if (!isPrivate) {
    // Anyone may read: the token does not change what is seen. But a request that carries one is
    // judged by it where the project requires a second factor (docs/auth.md "Project policy"):
    // below aal2, 403 as on every other route. Looked at only when the header is there, so a
    // public read without a token (the hot path) costs one header lookup more, no verification.
    if (caller.judgesToken()) await caller.user();
    return { scope: { projectId, keyKind: 'publishable' }, secret: false, userId: null, ownerFilter: null };
  }
  const user = await caller.user();
  if (!user) throw DataErrors.auth_required('Provide a valid user Bearer token for private reads.');
  return { scope: userScope(projectId, user), secret: false, userId: user.id, ownerFilter: user.id };
}

export async function writeAccess(ctx: AppContext, req: FastifyRequest, col: CollectionDef): Promise<Access> {
  return callerWriteAccess(requestCaller(ctx, req), col);
}

export async function callerWriteAccess(caller: Caller, col: CollectionDef): Promise<Access> {
  const { projectId } = caller;
  if (caller.keyKind === 'secret') return { scope: { projectId, keyKind: 'secret' }, secret: true, userId: null, ownerFilter: null };
  if (writeRules(col)) return rulesAccess(caller);
  if (!col.rls.enabled) throw DataErrors.write_blocked();
  if (col.rls.mode !== 'public-read' && col.rls.mode !== 'private') throw DataErrors.write_blocked('Unsupported RLS mode');
  const user = await caller.user();
  if (!user) throw DataErrors.auth_required('Provide a valid user Bearer token for write operations.');
  // Private collections: writes see only the caller's rows, like reads.
  const ownerFilter = col.rls.mode === 'private' ? user.id : null;
  return { scope: userScope(projectId, user), secret: false, userId: user.id, ownerFilter };
}

/** The documents this caller may see in `col` (private mode: only their own). */
export function docScope(col: CollectionDef, access: Access, includeDeleted = false): Scope {
  const s: Scope = { projectId: col.project_id, collectionId: col.id, includeDeleted, ownerId: access.ownerFilter };
  if (access.rules) s.viaPartition = true;
  const hidden = hiddenView(col, access.secret);
  if (hidden) s.hidden = hidden;
  return s;
}

/** How a caller reads a collection's hidden fields (queries.ts Scope.hidden): all, the owner's own, or none. */
export function hiddenView(col: Pick<CollectionDef, 'fields'>, secret: boolean): Scope['hidden'] {
  if (!hasHidden(col.fields)) return undefined;
  if (secret) return 'all';
  return hasOwnerHidden(col.fields) ? 'owner' : undefined;
}

/** `?hard=true` purges; only the secret key may. */
export function assertHardDeleteAllowed(access: Access): void {
  if (!access.secret) throw RequestAuthErrors.secret_key_required();
}

/** The value stored in documents.owner_id: the owner field as text (policies compare it). */
export function ownerOf(col: CollectionDef, id: string, data: Record<string, unknown>): string | null {
  const field = col.rls.ownerField;
  if (field === '_id') return id;
  const v = data[field];
  return typeof v === 'string' || typeof v === 'number' ? String(v) : null;
}

/** Create with the publishable key: fill a missing owner, refuse someone else's. */
export function applyOwnerOnCreate(col: CollectionDef, access: Access, doc: Record<string, unknown>, index: number): void {
  if (access.secret || access.rules) return;
  const field = col.rls.ownerField;
  if (field === '_id') throw DataErrors.insert_denied();
  const v = doc[field];
  if (v === undefined || v === null || v === '') doc[field] = access.userId;
  else if (v !== access.userId) {
    throw DataErrors.rls_owner_mismatch(`Item at index ${index} must have ${field} equal to your user id`);
  }
}

/** Update/delete with the publishable key: the stored owner must be the caller. */
export function assertOwner(access: Access, storedOwner: string | null): void {
  if (access.secret || access.rules) return;
  if (storedOwner !== access.userId) throw DataErrors.rls_denied();
}

/** The owner field may not change under RLS (publishable key). */
export function assertOwnerUnchanged(col: CollectionDef, access: Access, before: string | null, after: string | null): void {
  if (access.secret || access.rules) return;
  if (before !== after) throw DataErrors.owner_immutable(`${col.rls.ownerField} cannot be changed under RLS.`);
}
