/** Error catalogue of project export and import, and of scheduled backups and restores. */
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
  backup_schedule_invalid: { status: 400, message: 'The backup schedule is not valid.' },
  backup_not_found: { status: 404, message: 'Backup not found.' },
  backup_not_ready: { status: 409, message: 'Only a backup that succeeded can be downloaded or restored.' },
  backup_in_progress: { status: 409, message: 'A backup of this project is already queued or running.' },
  backup_in_use: { status: 409, message: 'The backup is still being written or restored: delete it once that has finished.' },
  restore_confirmation_mismatch: { status: 400, message: 'The confirmation does not name the project whose contents the restore replaces.' },
  backup_failed: { status: 500, message: 'The backup could not be written.' },
  backup_unreadable: { status: 500, message: 'The stored backup cannot be opened: it was changed, or it was sealed with another key.' },
  restore_failed: { status: 500, message: 'The restore failed: nothing was changed.' },
  operation_abandoned: { status: 500, message: 'The process running this operation stopped before it finished.' },
  export_interrupted: { status: 500, message: 'The export stopped before its end: its client left, or its snapshot failed.' },
  operation_not_found: { status: 404, message: 'Operation not found.' },
});
