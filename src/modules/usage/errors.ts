/** Error catalogue of the usage history and its alerts (docs/dashboard.md "Usage history"). */
import { defineErrors } from '../../lib/errors.js';

export const UsageErrors = defineErrors('usage', {
  usage_range_invalid: { status: 400, message: 'The range must have `from` before `to`, both valid times, and span at most 90 days.' },
  usage_metric_unknown: { status: 400, message: 'Unknown usage metric.' },
  usage_alert_settings_invalid: { status: 400, message: 'Invalid usage alert settings.' },
});
