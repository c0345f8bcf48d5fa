/** The wire form of a collection record: `{_id, name, model, rls, ...}`, never any secret. */
import type { Selectable } from 'kysely';
import type { CollectionsTable } from '../../db/types.js';

export type CollectionRow = Selectable<CollectionsTable>;

const iso = (d: unknown) => (d instanceof Date ? d.toISOString() : new Date(String(d)).toISOString());

export function collectionView(row: CollectionRow) {
  return {
    _id: row.id,
    name: row.name,
    model: row.fields,
    rls: row.rls,
    indexes: row.indexes,
    searchLanguage: row.search_language,
    realtime: row.realtime,
    schemaVersion: row.schema_version,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}
