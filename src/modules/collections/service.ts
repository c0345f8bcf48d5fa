/**
 * Collections: create, read, change the schema or RLS, delete. Knows no HTTP. Writes run in
 * one owner transaction (the row, its indexes, owner recomputation, quota refunds), then the
 * change is announced so every node's collection cache drops the project.
 */
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import type { Database } from '../../database.js';
import type { CompoundIndex, FieldDef, RlsConfig } from '../../db/types.js';
import { refund } from '../../lib/quota-queries.js';
import { planOf } from '../plans/plans.js';
import { announceChange } from './cache.js';
import { CollectionErrors } from './errors.js';
import { COLLECTION_NAME, RESERVED_COLLECTION_NAMES, normaliseFields, validateFieldDefs } from './fields.js';
import { dropPartitionsNow, enqueuePartitionCleanup } from './cleanup.js';
import { validateCompoundIndexes } from './compound.js';
import { isUsersCollection, syncIndexes, syncUserUniques } from './index-queries.js';
import { createPartition, truncatePartition } from './partition-queries.js';
import { syncChangeTriggers } from './change-trigger-queries.js';
import { DEFAULT_SEARCH_LANGUAGE, SEARCH_LANGUAGES } from './search.js';
import * as q from './queries.js';
import { applyRlsChange, defaultRls, type RlsInput } from './rls.js';
import { isUniqueViolation } from '../../db/errors.js';
import { dbBytes } from '../data/quota.js';
import { collectionView, type CollectionRow } from './view.js';
import { AuthErrors } from '../auth/errors.js';
import { breakRulesNaming, recompileRules, recompileRulesNaming, rulesNaming } from '../rules/service.js';

export interface CreateCollectionInput {
  name: string;
  fields: unknown;
  rls?: RlsInput;
  /** Compound indexes (compound.ts); none when absent. */
  indexes?: unknown;
  /** Full-text search language (search.ts); `simple` when absent. */
  searchLanguage?: unknown;
  /** Stream the collection's changes to realtime subscribers (docs/realtime.md); off when absent. */
  realtime?: boolean;
}

function checkedLanguage(raw: unknown): string {
  if (typeof raw === 'string' && SEARCH_LANGUAGES.has(raw)) return raw;
  throw CollectionErrors.invalid_schema(`Unknown searchLanguage; use one of: ${[...SEARCH_LANGUAGES].join(', ')}.`);
}

function checkedFields(name: string, raw: unknown): FieldDef[] {
  const fields = normaliseFields(raw ?? []);
  const problem = validateFieldDefs(fields);
  if (problem) throw CollectionErrors.invalid_schema(problem);
  const list = fields as FieldDef[];
  if (name.toLowerCase() === 'users') {
    const has = (k: string) => list.some((f) => f.key === k && f.type === 'String' && f.required === true);
    if (!has('email') || !has('password')) throw AuthErrors.users_schema_invalid("The 'users' collection must have required 'email' and 'password' string fields.");
  }
  return list;
}

function checkedIndexes(raw: unknown, fields: FieldDef[]): CompoundIndex[] {
  const problem = validateCompoundIndexes(raw, fields);
  if (problem) throw CollectionErrors.invalid_schema(problem);
  return raw as CompoundIndex[]; // exactly `{ fields }` objects: the validation refuses other members
}

/** A new unique field over existing duplicates (documents, or the end users of a `users` schema) → 409. */
function duplicatesConflict(err: unknown): never {
  if (isUniqueViolation(err)) {
    throw CollectionErrors.unique_duplicates('Cannot create unique index: duplicate values exist for a unique field.');
  }
  throw err;
}

/** Creates a collection for a project owned by `plan`'s operator; each API renders its own view. */
export async function createCollection(ctx: AppContext, projectId: string, planName: string, input: CreateCollectionInput): Promise<CollectionRow> {
  const row = await ctx.db.admin
    .transaction()
    .execute((tx) => createCollectionIn(tx, ctx.clock.now(), projectId, planName, input))
    .catch(duplicatesConflict);
  await announceChange(ctx, projectId);
  return row;
}

/**
 * The same inside the caller's owner transaction (a project import creates several in one);
 * the caller announces the change after its commit.
 */
export async function createCollectionIn(tx: Kysely<Database>, now: Date, projectId: string, planName: string, input: CreateCollectionInput): Promise<CollectionRow> {
  if (typeof input.name !== 'string' || !COLLECTION_NAME.test(input.name)) throw CollectionErrors.invalid_collection_name();
  // POST /api/data/batch is the atomic batch: a collection of that name could not be written to.
  if (RESERVED_COLLECTION_NAMES.has(input.name.toLowerCase())) throw CollectionErrors.invalid_collection_name(`'${input.name}' is reserved; choose another collection name.`);
  const fields = checkedFields(input.name, input.fields);
  const indexes = checkedIndexes(input.indexes ?? [], fields);
  const searchLanguage = checkedLanguage(input.searchLanguage ?? DEFAULT_SEARCH_LANGUAGE);
  let rls = defaultRls(input.name, fields);
  if (input.rls) rls = applyRlsChange(input.name, fields, rls, input.rls);
  const limit = planOf(planName).collectionsPerProject;
  await q.lockProject(tx, projectId);
  if (await q.findCollection(tx, projectId, input.name)) throw CollectionErrors.collection_exists();
  if (limit >= 0 && (await q.countCollections(tx, projectId)) >= limit) {
    throw CollectionErrors.collection_limit_reached(`Collection limit reached (${limit}). Please upgrade your plan to create more collections.`);
  }
  const realtime = input.realtime === true;
  const created = await q.insertCollection(tx, { projectId, name: input.name, fields, rls, indexes, searchLanguage, realtime, now });
  await createPartition(tx, created.id);
  await syncIndexes(tx, created, fields, indexes);
  await syncChangeTriggers(tx, projectId);
  return created;
}

export async function getCollection(ctx: AppContext, projectId: string, name: string): Promise<CollectionRow> {
  const row = await q.findCollection(ctx.db.admin, projectId, name);
  if (!row) throw CollectionErrors.collection_not_found();
  return row;
}

export async function listCollections(ctx: AppContext, projectId: string) {
  return (await q.listCollections(ctx.db.admin, projectId)).map(collectionView);
}

/**
 * Replaces the schema (and the compound indexes when given, else keeps them; they must fit the
 * new fields): version + 1, indexes rebuilt; duplicates under a new unique field → 409.
 */
export async function updateSchema(ctx: AppContext, projectId: string, name: string, rawFields: unknown, rawIndexes?: unknown, rawLanguage?: unknown) {
  const current = await getCollection(ctx, projectId, name);
  const fields = checkedFields(current.name, rawFields);
  const indexes = checkedIndexes(rawIndexes ?? current.indexes, fields);
  const searchLanguage = checkedLanguage(rawLanguage ?? current.search_language);
  const row = await ctx.db.admin
    .transaction()
    .execute(async (tx) => {
      const updated = await q.updateCollectionFields(tx, current.id, fields, indexes, searchLanguage, ctx.clock.now());
      await recompileRules(tx, projectId, { id: current.id, fields, rules: current.rules, rules_broken: current.rules_broken }, ctx.clock.now());
      await recompileRulesNaming(tx, projectId, current, ctx.clock.now());
      await syncIndexes(tx, updated, fields, indexes);
      return updated;
    })
    .catch(duplicatesConflict);
  await announceChange(ctx, projectId);
  return collectionView(row);
}

export async function updateRls(ctx: AppContext, projectId: string, name: string, input: RlsInput) {
  const current = await getCollection(ctx, projectId, name);
  const rls: RlsConfig = applyRlsChange(current.name, current.fields, current.rls, input);
  const row = await ctx.db.admin.transaction().execute(async (tx) => {
    const updated = await q.updateCollectionRls(tx, current.id, rls, ctx.clock.now());
    if (rls.ownerField !== current.rls.ownerField) await q.recomputeOwners(tx, current.id, rls.ownerField);
    return updated;
  });
  await announceChange(ctx, projectId);
  return { name: row.name, rls: row.rls };
}

/**
 * Deletes the collection and its documents and frees their database bytes, in one transaction;
 * the emptied partition (and its indexes) is dropped right after the commit (cleanup.ts).
 * A collection other collections' rules look up is refused (409 collection_referenced_by_rules,
 * listing them) unless `force`, which marks those rules broken in the same transaction: they
 * deny everything until saved again (docs/rules.md, "When a looked-up collection goes").
 */
export async function deleteCollection(ctx: AppContext, projectId: string, name: string, opts: { force?: boolean } = {}): Promise<string> {
  const current = await getCollection(ctx, projectId, name);
  await ctx.db.admin.transaction().execute(async (tx) => {
    await q.lockProject(tx, projectId);
    const naming = await rulesNaming(tx, projectId, current);
    if (naming.length && !opts.force) {
      const list = naming.map((n) => `'${n.collection}' (${n.actions.join(', ')})`).join(', ');
      throw CollectionErrors.collection_referenced_by_rules(
        `The access rules of ${list} look '${current.name}' up. Change those rules first, or delete with ?force=true, which marks them broken: they deny everything until saved again.`,
        { rules: naming.map(({ collection, actions }) => ({ collection, actions })) },
      );
    }
    await breakRulesNaming(tx, naming, current.name);
    const bytes = await truncatePartition(tx, current.id);
    await q.deleteCollection(tx, current.id);
    if (isUsersCollection(current.name)) await syncUserUniques(tx, projectId, []);
    if (bytes > 0) await refund(tx, dbBytes(projectId), bytes);
    await enqueuePartitionCleanup(ctx, tx);
  });
  await announceChange(ctx, projectId); // first: no node routes new writes to the partition
  await dropPartitionsNow(ctx);
  return current.name;
}

/**
 * Removes every collection of a project inside the caller's transaction (a restore that
 * replaces the project's contents, src/modules/backup): each partition emptied and queued for
 * dropping, the database bytes refunded. After its commit the caller announces the change and
 * runs dropPartitionsNow, as deleteCollection does. Returns how many were removed.
 */
export async function removeAllCollectionsIn(ctx: AppContext, tx: Kysely<Database>, projectId: string): Promise<number> {
  const rows = await q.listCollections(tx, projectId);
  let bytes = 0;
  for (const c of rows) {
    bytes += await truncatePartition(tx, c.id);
    await q.deleteCollection(tx, c.id);
  }
  if (rows.some((c) => isUsersCollection(c.name))) await syncUserUniques(tx, projectId, []);
  if (bytes > 0) await refund(tx, dbBytes(projectId), bytes);
  if (rows.length) await enqueuePartitionCleanup(ctx, tx);
  return rows.length;
}

/** Turns the streaming of a collection's changes to realtime subscribers on or off. */
export async function setRealtime(ctx: AppContext, projectId: string, name: string, enabled: boolean) {
  const current = await getCollection(ctx, projectId, name);
  const row = await ctx.db.admin.transaction().execute(async (tx) => {
    const updated = await q.updateCollectionRealtime(tx, current.id, enabled, ctx.clock.now());
    await syncChangeTriggers(tx, projectId);
    return updated;
  });
  await announceChange(ctx, projectId);
  return collectionView(row);
}
