/** What a rule of a collection compiles against (compile.ts): the project's collections and its users schema. */
import type { Kysely } from 'kysely';
import type { Database } from '../../database.js';
import type { CompileContext, RuleAction, RuleCollection } from './compile.js';
import * as q from './queries.js';
import { isUsersCollection } from '../collections/index-queries.js';

/** Lookups resolve among the project's own collections, never another project's. */
export async function compileContexts(db: Kysely<Database>, projectId: string, collection: RuleCollection): Promise<(action: RuleAction) => CompileContext> {
  const all = (await q.projectCollections(db, projectId)).map((c) => ({ ...c, users: isUsersCollection(c.name) }));
  const byName = new Map(all.map((c) => [c.name.toLowerCase(), c]));
  const userFields = byName.get('users')?.fields ?? [];
  // The users collection's own rules read app_users (compile.ts), whoever passed the collection in.
  const self = { ...collection, users: all.some((c) => c.id === collection.id && c.users) };
  return (action) => ({ collection: self, action, lookup: (name) => byName.get(name.toLowerCase()), userFields });
}
