/** Error catalogue of the data API (docs/wire-compatibility.md §4.5, §5). */
import { defineErrors } from '../../lib/errors.js';

export const DataErrors = defineErrors('data', {
  document_not_found: { status: 404, message: 'Document not found.' },
  users_collection_protected: { status: 403, message: 'Use /api/userAuth endpoints for users collection operations.' },
  invalid_query: { status: 400, message: 'Invalid query.' },
  invalid_body: { status: 400, message: 'Invalid request body.' },
  document_invalid: { status: 400, message: 'Document validation failed.' },
  value_too_long: { status: 400, message: 'A value is too long for a unique field (at most about 2 700 bytes).' },
  duplicate_value: { status: 409, message: 'Duplicate value violates unique constraint.' },
  database_limit: { status: 403, message: 'Database limit exceeded.' },
  write_conflict: { status: 409, message: 'The document kept changing while being updated. Please retry.' },
  precondition_failed: { status: 412, message: 'The document has changed since this version: If-Match does not name its current ETag. Read it again.' },
  if_match_invalid: { status: 400, message: 'If-Match must be * or a comma-separated list of quoted entity tags ("…"), as the ETag header gives them.' },
  query_timeout: { status: 400, message: 'The query took too long. Narrow the filters or simplify the regex.' },
  auth_required: { status: 401, message: 'Authentication required' },
  write_blocked: { status: 403, message: 'Enable RLS for this collection to allow publishable-key writes.' },
  rls_denied: { status: 403, message: 'You can only modify your own document.' },
  owner_immutable: { status: 403, message: 'Owner field immutable' },
  rls_owner_mismatch: { status: 403, message: 'The owner field must equal your user id.' },
  field_hidden: { status: 400, message: 'A hidden field cannot be queried.' },
  field_read_only: { status: 403, message: 'A read-only field can only be set or changed with the secret key.' },
  insert_denied: { status: 403, message: "RLS ownerField '_id' is not valid for insert ownership checks." },
});
