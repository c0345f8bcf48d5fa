/** Error catalogue of project export and import. */
import { defineErrors } from '../../lib/errors.js';

export const BackupErrors = defineErrors('backup', {
  invalid_archive: { status: 400, message: 'The archive is not a valid Plinth project archive.' },
  archive_too_large: { status: 413, message: 'The archive is larger than IMPORT_MAX_BYTES.' },
  archive_too_many_lines: { status: 413, message: 'The archive has more lines than IMPORT_MAX_LINES.' },
  import_conflicts: { status: 409, message: 'The archive cannot be imported into this project.' },
  import_in_progress: { status: 429, message: 'Another import of yours is running: wait for it to finish, then try again.' },
  import_stalled: { status: 408, message: 'The upload stalled: the import was stopped, nothing was written.' },
  import_timeout: { status: 408, message: 'The import took longer than IMPORT_TIMEOUT: it was stopped, nothing was written.' },
  import_aborted: { status: 400, message: 'The client closed the connection before the import finished: nothing was written.' },
});
