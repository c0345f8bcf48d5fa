/**
 * Access rules of a collection (docs/rules.md): validated and compiled when saved, stored with
 * their SQL, which becomes the partition's policies. Knows no HTTP.
 */
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import type { Database } from '../../database.js';
import type { FieldDef, RulesConfig } from '../../db/types.js';
import { announceChange } from '../collections/cache.js';
import { CollectionErrors } from '../collections/errors.js';
import { findCollection } from '../collections/queries.js';
import type { RuleAction, RuleCollection } from './compile.js';
import { ruleWarnings } from './plan.js';
import { compileContexts } from './compile-context.js';
import { compileRuleText } from './rule.js';
import * as q from './queries.js';
import { lookupCycle } from './cycles.js';
import { RuleErrors } from './errors.js';
import { isUsersCollection } from '../collections/index-queries.js';

export const ACTIONS: RuleAction[] = ['list', 'view', 'create', 'update', 'delete'];

export type RulesInput = Partial<Record<RuleAction, string | null>>;

/** Compiles every rule given (a blank one is none); the first refused one is the error. */
export async function compileRules(db: Kysely<Database>, projectId: string, collection: RuleCollection, rules: RulesConfig) {
  const contextOf = await compileContexts(db, projectId, collection);
  if (contextOf('create').collection.users && rules.create != null) {
    throw RuleErrors.rule_invalid(
      "Invalid create rule: users are created by signing up, which the project's sign-in settings govern, not a rule (at character 1).",
      { action: 'create', position: 1 },
    );
  }
  const compiled: Partial<RulesConfig> = {};
  for (const action of ACTIONS) {
    const text = rules[action];
    if (text === null) continue;
    compiled[action] = compileRuleText(text, contextOf(action));
  }
  return compiled;
}


function normalise(current: RulesConfig | null, input: RulesInput): RulesConfig | null {
  const next: RulesConfig = { list: null, view: null, create: null, update: null, delete: null, ...current };
  for (const action of ACTIONS) {
    const v = input[action];
    if (v !== undefined) next[action] = v === null || v.trim() === '' ? null : v;
  }
  return ACTIONS.some((a) => next[a] !== null) ? next : null;
}

export async function updateRules(ctx: AppContext, projectId: string, name: string, input: RulesInput) {
  const col = await getCollection(ctx, projectId, name);
  const rules = normalise(col.rules, input);
  const compiled = rules ? await compileRules(ctx.db.admin, projectId, col, rules) : null;
  await assertNoLookupCycle(ctx.db.admin, projectId, col.id, compiled);
  await q.setRules(ctx.db.admin, col.id, rules, compiled, ctx.clock.now());
  await announceChange(ctx, projectId);
  return getRules(ctx, projectId, col.name);
}

/** Refuses rules whose lookups would loop through the project's read rules (cycles.ts). */
async function assertNoLookupCycle(db: Kysely<Database>, projectId: string, collectionId: string, compiled: Partial<RulesConfig> | null) {
  const all = (await q.projectCollections(db, projectId)).map((c) => ({
    id: c.id, name: c.name, rules_sql: c.id === collectionId ? compiled : (c.rules_sql as Partial<RulesConfig> | null),
  }));
  const loop = lookupCycle(all);
  if (loop) throw RuleErrors.rule_cycle(`These rules would make lookups loop: ${loop.join(' → ')}. PostgreSQL cannot evaluate a loop of policies: change one of these rules so the lookups do not come back.`);
}

async function getCollection(ctx: AppContext, projectId: string, name: string) {
  const row = await findCollection(ctx.db.admin, projectId, name);
  if (!row) throw CollectionErrors.collection_not_found();
  return row;
}

/**
 * A schema change compiles the collection's rules again, in its transaction `tx`: the policies
 * follow the new field types, and a change that leaves a rule naming a field no longer there
 * (or comparing it as another type) is refused with that rule's error (400 rule_invalid).
 */
export async function recompileRules(tx: Kysely<Database>, projectId: string, col: { id: string; fields: FieldDef[]; rules: RulesConfig | null }, now: Date) {
  if (!col.rules) return;
  await q.setRules(tx, col.id, col.rules, await compileRules(tx, projectId, col, col.rules), now);
}

/** The rules as written, their compiled SQL, and the partition's policies as PostgreSQL holds them. */
export async function getRules(ctx: AppContext, projectId: string, name: string) {
  const col = await getCollection(ctx, projectId, name);
  const users = isUsersCollection(col.name);
  const policies = users ? await q.userPolicies(ctx.db.admin, projectId) : await q.partitionPolicies(ctx.db.admin, col.id);
  return {
    name: col.name,
    rules: col.rules ?? { list: null, view: null, create: null, update: null, delete: null },
    sql: (col.rules_sql ?? {}) as Record<string, string>,
    policies: policies.map((p) => ({ name: p.policyname, command: p.cmd, roles: p.roles, using: p.qual, withCheck: p.with_check })),
    // Index warnings plan a partition's list; users are app_users rows (not planned: docs/rules.md).
    warnings: col.rules && !users ? await ruleWarnings(ctx, projectId, col, col.rules) : [],
  };
}
