/** Errors of the database view (docs/dashboard.md, "Database"). */
import { defineErrors } from '../../lib/errors.js';

export const DatabaseInsightErrors = defineErrors('database-insight', {
  database_insight_timeout: {
    status: 503,
    message: "Reading the database's catalog and statistics took longer than allowed. Try again in a moment.",
  },
});
