/** The public schema record: `{_id, name, model, rls}` (model in the internal field form). */
import type { CollectionRow } from '../collections/view.js';

export function schemaView(col: CollectionRow) {
  return { _id: col.id, name: col.name, model: col.fields, rls: col.rls, schemaVersion: col.schema_version };
}
