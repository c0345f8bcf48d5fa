/** Error catalogue of the schemas API (docs/wire-compatibility.md §5.10). */
import { defineErrors } from '../../lib/errors.js';

export const SchemaErrors = defineErrors('schemas', {
  schema_not_found: { status: 404, message: 'Schema/Collection not found' },
});
