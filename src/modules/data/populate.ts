/**
 * `populate` / `expand`: replaces the ids in declared top-level Ref fields with the referenced
 * documents (null when missing or not visible). Runs in the caller's tenant transaction, so
 * the target collection's policies apply. Users come from the end-user table and never carry
 * a password.
 */
import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/pool.js';
import { isObjectId } from '../../lib/ids.js';
import type { CollectionDef } from '../collections/cache.js';
import { getRowsByIds, usersByIds } from './queries.js';
import { hiddenView } from './access.js';
import { withoutHidden } from '../collections/protection.js';
import type { FieldDef } from '../../db/types.js';
import { documentView } from './view.js';

type Doc = Record<string, unknown>;

/** End users by id; their hidden profile fields (docs/rules.md) only for the secret key. */
async function loadUsers(tx: Tx, projectId: string, ids: string[], usersFields: FieldDef[], secret: boolean): Promise<Map<string, Doc>> {
  const res = await usersByIds(tx, projectId, ids, secret);
  return new Map(
    res.rows.map((r) => {
      const { password: _pw, ...all } = r.data ?? {};
      const data = secret ? all : withoutHidden(usersFields, all, false);
      return [r.id, { _id: r.id, email: r.email, ...data, createdAt: r.created_at.toISOString(), updatedAt: r.updated_at.toISOString() }];
    }),
  );
}

/**
 * Through the shared scoped query: the collection id must be a literal, or the statement (one
 * text for every collection, prepared per connection) could get a generic plan over every
 * partition of the platform.
 */
async function loadDocs(tx: Tx, target: CollectionDef, ids: string[], secret: boolean): Promise<Map<string, Doc>> {
  const rows = await getRowsByIds(tx, { projectId: target.project_id, collectionId: target.id, includeDeleted: false, hidden: hiddenView(target, secret) }, ids);
  return new Map(rows.map((r) => [r.id, documentView(r)]));
}

/** `secret`: the caller holds the secret key (hidden fields of the targets come along). */
export async function populate(ctx: AppContext, tx: Tx, col: CollectionDef, docs: Doc[], names: string[], secret: boolean): Promise<void> {
  for (const name of new Set(names)) {
    const def = col.byKey.get(name);
    if (!def || def.type !== 'Ref' || !def.ref) continue;
    const ids = [...new Set(docs.map((d) => d[name]).filter(isObjectId))];
    if (!ids.length) continue;
    let found: Map<string, Doc>;
    if (def.ref.toLowerCase() === 'users') {
      const users = await ctx.collections.get(col.project_id, 'users');
      found = await loadUsers(tx, col.project_id, ids, users?.fields ?? [], secret);
    } else {
      const target = await ctx.collections.get(col.project_id, def.ref);
      found = target ? await loadDocs(tx, target, ids, secret) : new Map();
    }
    for (const d of docs) if (isObjectId(d[name])) d[name] = found.get(d[name] as string) ?? null;
  }
}
