/** The public schema record: `{_id, name, model, rls, indexes}` (model in the internal field form). */
import type { CollectionRow } from '../collections/view.js';

export function schemaView(col: CollectionRow) {
  return { _id: col.id, name: col.name, model: col.fields, rls: col.rls, indexes: col.indexes, schemaVersion: col.schema_version };
}
