/** Error catalogue of project export and import. */
import { defineErrors } from '../../lib/errors.js';

export const BackupErrors = defineErrors('backup', {
  invalid_archive: { status: 400, message: 'The archive is not a valid Plinth project archive.' },
  archive_too_large: { status: 413, message: 'The archive is larger than IMPORT_MAX_BYTES.' },
  import_conflicts: { status: 409, message: 'The archive cannot be imported into this project.' },
});
