/** Error catalogue of the audit log (docs/audit.md). */
import { defineErrors } from '../../lib/errors.js';

export const AuditErrors = defineErrors('audit', {
  audit_time_range_invalid: { status: 400, message: 'The time range is empty: `from` must not be after `to`.' },
  audit_cursor_invalid: { status: 400, message: 'The cursor is not one this list gave.' },
});
