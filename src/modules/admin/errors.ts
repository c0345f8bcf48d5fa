/** Errors of the admin domain. */
import { defineErrors } from '../../lib/errors.js';

export const AdminErrors = defineErrors('admin', {
  invalid_plan: { status: 400, message: "Invalid plan. Must be 'free' or 'pro'." },
  operator_missing: { status: 404, message: 'Operator not found.' },
});
