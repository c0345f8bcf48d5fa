/**
 * Whether a collection's rules can use indexes (docs/rules.md, "Index warnings"): the saved
 * policies are planned by PostgreSQL in a publishable scope, never guessed. Each warning carries
 * the plan that shows it. EXPLAIN without ANALYZE: nothing runs, no document is read.
 *
 * - The read rule (`list`, else `view`) that restricts rows by their fields: a list of the
 *   collection with sequential scans priced out still reads the whole partition → `rule_no_index`.
 * - Every lookup of every rule, planned on its own (compile.ts planProbes): a lookup that reads
 *   the whole looked-up partition runs that scan for each statement (and, when PostgreSQL cannot
 *   hash it, for each document) → `rule_no_index`.
 * - The document accessors are not LEAKPROOF (a database set up without a superuser, migrations/003):
 *   a client's filters then cannot use indexes beneath any policy → `rule_not_leakproof`.
 */
import type { AppContext } from '../../context.js';
import type { RulesConfig } from '../../db/types.js';
import { objectId } from '../../lib/ids.js';
import { partitionName } from '../collections/partition-queries.js';
import { planProbes, readsRows, type RuleAction, type RuleCollection } from './compile.js';
import { parseRule } from './parser.js';
import * as q from './queries.js';
import { compileContexts } from './compile-context.js';

export interface RuleWarning {
  action: RuleAction;
  code: 'rule_no_index' | 'rule_not_leakproof';
  message: string;
  /** The plan PostgreSQL chose (EXPLAIN), when the warning comes from one. */
  plan?: string;
}

const ACTIONS: RuleAction[] = ['list', 'view', 'create', 'update', 'delete'];

function readsWholePartition(plan: string, collectionId: string): boolean {
  return new RegExp(`Seq Scan on ${partitionName(collectionId)}\\b`).test(plan);
}

export async function ruleWarnings(
  ctx: AppContext,
  projectId: string,
  col: RuleCollection & { name: string; rules_sql: Partial<RulesConfig> | null },
  rules: RulesConfig,
): Promise<RuleWarning[]> {
  const contextOf = await compileContexts(ctx.db.admin, projectId, col);
  const warnings: RuleWarning[] = [];
  // Any signed-in user: the plan does not depend on who (the scope settings are parameters to it).
  const scope = { projectId, userId: objectId(), keyKind: 'publishable' as const };
  await ctx.db.tenant(scope, async (tx) => {
    const readAction: RuleAction | null = rules.list !== null ? 'list' : rules.view !== null ? 'view' : null;
    if (readAction && readsRows(parseRule(rules[readAction]!))) {
      const sqlOf = col.rules_sql ?? {};
      const extra = sqlOf.list && sqlOf.view && sqlOf.list !== sqlOf.view ? sqlOf.list : null;
      const plan = await q.planWithoutSeqScans(tx, q.listStatement(projectId, col.id, extra));
      if (readsWholePartition(plan, col.id)) {
        warnings.push({
          action: readAction,
          code: 'rule_no_index',
          message:
            `The ${readAction} rule cannot use an index of '${col.name}': every list reads the whole collection. ` +
            'Compare an indexed field (declared, top-level, scalar) with = , <, >, or in, joined by && (an || needs an index on each side); ! and != cannot use one.',
          plan,
        });
      }
    }
    for (const action of ACTIONS) {
      const text = rules[action];
      if (text === null) continue;
      for (const probe of planProbes(parseRule(text), contextOf(action))) {
        const plan = await q.planWithoutSeqScans(tx, probe.sql);
        if (!readsWholePartition(plan, probe.collectionId)) continue;
        warnings.push({
          action,
          code: 'rule_no_index',
          message:
            `The lookup into '${probe.collection}' in the ${action} rule cannot use an index: it reads all of '${probe.collection}'. ` +
            `Compare an indexed field of '${probe.collection}' with = (e.g. user = @auth.id).`,
          plan,
        });
      }
    }
  });
  const leaky = await q.leakyAccessors(ctx.db.admin);
  if (leaky.length) {
    warnings.push({
      action: ACTIONS.find((a) => rules[a] !== null)!,
      code: 'rule_not_leakproof',
      message: `The document accessors ${leaky.join(', ')} are not LEAKPROOF (the database was set up without a superuser): a client's filters cannot use indexes under any policy. Run the migrations as a superuser to fix it.`,
    });
  }
  return warnings;
}
