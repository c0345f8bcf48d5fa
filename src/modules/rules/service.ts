/**
 * Access rules of a collection (docs/rules.md): validated and compiled when saved, stored with
 * their SQL, which becomes the partition's policies. Knows no HTTP.
 */
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import type { Database } from '../../database.js';
import type { FieldDef, RulesBroken, RulesConfig } from '../../db/types.js';
import { announceChange } from '../collections/cache.js';
import { CollectionErrors } from '../collections/errors.js';
import { findCollection } from '../collections/queries.js';
import { lookedUpNames, type RuleAction, type RuleCollection } from './compile.js';
import { parseRule } from './parser.js';
import { ruleWarnings } from './plan.js';
import { compileContexts } from './compile-context.js';
import { compileRuleText } from './rule.js';
import * as q from './queries.js';
import { lookupCycle } from './cycles.js';
import { RuleErrors } from './errors.js';
import { AppError } from '../../lib/errors.js';
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
 * (or comparing it as another type) is refused with that rule's error (400 rule_invalid). An
 * action marked broken stays broken (`false`): only saving the rules clears the mark.
 */
export async function recompileRules(
  tx: Kysely<Database>,
  projectId: string,
  col: { id: string; fields: FieldDef[]; rules: RulesConfig | null; rules_broken?: RulesBroken | null },
  now: Date,
) {
  if (!col.rules) return;
  const broken = brokenOf(col);
  const live: RulesConfig = { ...col.rules };
  for (const { action } of broken) live[action] = null;
  const compiled = await compileRules(tx, projectId, col, live);
  for (const { action } of broken) compiled[action] = 'false';
  await q.setRules(tx, col.id, col.rules, compiled, now, broken.length ? col.rules_broken! : null);
}

/** The broken actions of a collection's rules, each with its reason, in action order. */
export function brokenOf(col: { rules: RulesConfig | null; rules_broken?: RulesBroken | null }): Array<{ action: RuleAction; reason: string }> {
  const marks = col.rules_broken ?? {};
  return ACTIONS.filter((a) => col.rules?.[a] != null && Object.hasOwn(marks, a)).map((action) => ({ action, reason: marks[action]! }));
}

/** Which actions of `rules` look collection `name` up (rules that do not parse name nothing). */
function actionsNaming(rules: RulesConfig, name: string): RuleAction[] {
  const wanted = name.toLowerCase();
  return ACTIONS.filter((action) => {
    const text = rules[action];
    if (text == null) return false;
    try {
      return [...lookedUpNames(parseRule(text))].some((n) => n.toLowerCase() === wanted);
    } catch {
      return false;
    }
  });
}

export interface RulesNaming {
  id: string;
  collection: string;
  actions: RuleAction[];
}

/** The other collections of the project whose rules look `target` up, with the actions that do. */
export async function rulesNaming(tx: Kysely<Database>, projectId: string, target: { id: string; name: string }): Promise<RulesNaming[]> {
  const out: RulesNaming[] = [];
  for (const c of await q.collectionsWithRules(tx, projectId)) {
    if (c.id === target.id || !c.rules) continue;
    const actions = actionsNaming(c.rules, target.name);
    if (actions.length) out.push({ id: c.id, collection: c.name, actions });
  }
  return out;
}

/**
 * A looked-up collection is being deleted (forced, docs/rules.md "When a looked-up collection
 * goes"): in the deleting transaction, the actions that name it are marked broken and deny
 * everything (their policies are rebuilt without the lookup, before its partition is dropped).
 */
export async function breakRulesNaming(tx: Kysely<Database>, naming: RulesNaming[], deleted: string): Promise<void> {
  const reason = `Looks up collection '${deleted}', which was deleted: this rule denies everything until the rules are saved again.`;
  for (const n of naming) await q.markRulesBroken(tx, n.id, n.actions, reason);
}

/**
 * A schema change of a collection other rules look up: those rules are compiled again against
 * the new schema in its transaction (their policies follow the new field types); a lookup that
 * no longer compiles (a field removed, renamed or retyped) refuses the change with 409
 * collection_referenced_by_rules, naming the rule and its error. Broken actions stay broken.
 */
export async function recompileRulesNaming(tx: Kysely<Database>, projectId: string, target: { id: string; name: string }, now: Date): Promise<void> {
  const naming = await rulesNaming(tx, projectId, target);
  if (!naming.length) return;
  const rows = new Map((await q.collectionsWithRules(tx, projectId)).map((c) => [c.id, c]));
  for (const n of naming) {
    const c = rows.get(n.id)!;
    try {
      await recompileRules(tx, projectId, c, now);
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'rule_invalid') throw err;
      throw CollectionErrors.collection_referenced_by_rules(
        `The ${String(err.extra.action)} rule of collection '${c.name}' looks '${target.name}' up and would no longer compile: ${err.message} Change that rule first.`,
        { rules: naming.map(({ collection, actions }) => ({ collection, actions })) },
      );
    }
  }
}

/** The rules as written, their compiled SQL, and the partition's policies as PostgreSQL holds them. */
export async function getRules(ctx: AppContext, projectId: string, name: string) {
  const col = await getCollection(ctx, projectId, name);
  const users = isUsersCollection(col.name);
  const live = col.rules && withoutBroken(col);
  const policies = users ? await q.userPolicies(ctx.db.admin, projectId) : await q.partitionPolicies(ctx.db.admin, col.id);
  return {
    name: col.name,
    rules: col.rules ?? { list: null, view: null, create: null, update: null, delete: null },
    sql: (col.rules_sql ?? {}) as Record<string, string>,
    broken: brokenOf(col),
    policies: policies.map((p) => ({ name: p.policyname, command: p.cmd, roles: p.roles, using: p.qual, withCheck: p.with_check })),
    // Index warnings plan a partition's list; users are app_users rows (not planned: docs/rules.md).
    // Broken actions deny everything (`false`): nothing to plan, and their text may name a
    // collection the project no longer has.
    warnings: live && !users && ACTIONS.some((a) => live[a] !== null) ? await ruleWarnings(ctx, projectId, col, live) : [],
  };
}

/** The rules minus the actions marked broken. */
function withoutBroken(col: { rules: RulesConfig | null; rules_broken?: RulesBroken | null }): RulesConfig {
  const rules: RulesConfig = { ...col.rules! };
  for (const { action } of brokenOf(col)) rules[action] = null;
  return rules;
}
