/**
 * Lookups that loop back (docs/rules.md, "Lookups"): PostgreSQL expands a partition's policy,
 * then the read policy of every partition a lookup in it reads, and so on; meeting a partition
 * already being expanded is "infinite recursion detected in policy" at run time, for every write
 * or read that reaches it. Found by the board example (lists' read rule looked `members` up while
 * members' create rule looked `lists` up: adding a member failed). So a set of rules with such a
 * loop is refused when saved, naming it.
 */
import type { RulesConfig } from '../../db/types.js';

export interface CompiledCollection {
  id: string;
  name: string;
  rules_sql: Partial<RulesConfig> | null;
}

const ACTIONS = ['list', 'view', 'create', 'update', 'delete'] as const;
/** The partitions a compiled rule reads through lookups (compile.ts writes `FROM "documents_<id>"`; the rule's own partition is never FROM). */
const LOOKUP = /FROM "documents_([0-9a-f]{24})"/g;

/** A lookup into the users collection reads app_users (compile.ts): `FROM "app_users"`. */
const USERS_LOOKUP = /FROM "app_users"/;

/** The first loop of lookups, as collection names from the policy that starts it (null: none). */
export function lookupCycle(collections: CompiledCollection[]): string[] | null {
  const byId = new Map(collections.map((c) => [c.id, c]));
  const usersId = collections.find((c) => c.name.toLowerCase() === 'users')?.id;
  const lookedUp = (text: string | null | undefined): string[] => {
    if (!text) return [];
    const ids = new Set([...text.matchAll(LOOKUP)].map((m) => m[1]!));
    if (usersId && USERS_LOOKUP.test(text)) ids.add(usersId);
    return [...ids];
  };
  const readLookups = (c: CompiledCollection) => lookedUp(c.rules_sql?.view ?? c.rules_sql?.list);
  const walk = (id: string, path: string[]): string[] | null => {
    if (path.includes(id)) return [...path, id];
    const c = byId.get(id);
    if (!c) return null;
    for (const next of readLookups(c)) {
      const loop = walk(next, [...path, id]);
      if (loop) return loop;
    }
    return null;
  };
  for (const c of collections) {
    for (const action of ACTIONS) {
      for (const target of lookedUp(c.rules_sql?.[action])) {
        const loop = walk(target, [c.id]);
        if (loop) return loop.map((id) => byId.get(id)?.name ?? id);
      }
    }
  }
  return null;
}
