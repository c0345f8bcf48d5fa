/**
 * Whether a collection's publishable-key callers are governed by access rules (docs/rules.md).
 * A leaf module (type imports only): realtime's event matcher uses it without the data domain's
 * access module, which would close an import cycle through the context.
 */
import type { RulesConfig } from '../../db/types.js';

type WithRules = { rules_sql: Partial<RulesConfig> | null };

/** Reads follow rules (the partition's SELECT policy is compiled from `list` / `view`). */
export function readRules(col: WithRules): boolean {
  return !!col.rules_sql && (col.rules_sql.list != null || col.rules_sql.view != null);
}

/** Writes follow rules: any rule sends the collection's writes to its partition. */
export function writeRules(col: WithRules): boolean {
  return !!col.rules_sql;
}
