/** Error catalogue of the collections domain (dashboard + schemas API). */
import { defineErrors } from '../../lib/errors.js';

export const CollectionErrors = defineErrors('collections', {
  collection_not_found: { status: 404, message: 'Collection not found' },
  collection_exists: { status: 409, message: 'Collection already exists' },
  collection_limit_reached: { status: 403, message: 'Collection limit reached. Please upgrade your plan to create more collections.' },
  invalid_collection_name: {
    status: 400,
    message: "Invalid collection name: use 1-64 letters, digits, '_' or '-'.",
  },
  invalid_schema: { status: 400, message: 'Invalid schema.' },
  unique_duplicates: { status: 409, message: 'Cannot create unique index: duplicate values exist.' },
  invalid_rls_mode: { status: 400, message: 'Unsupported RLS mode. Allowed: public-read, private, owner-write-only (legacy).' },
  invalid_owner_field: { status: 400, message: 'Invalid owner field' },
  collection_referenced_by_rules: {
    status: 409,
    message: "Other collections' access rules look this collection up (listed in `rules`): change them first, or delete with ?force=true, which marks them broken (they deny everything until saved again).",
  },
});
