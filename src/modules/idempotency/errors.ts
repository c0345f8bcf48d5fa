/** The idempotency domain's error catalogue (docs/data.md "Retries: Idempotency-Key"). */
import { defineErrors } from '../../lib/errors.js';

export const IdempotencyErrors = defineErrors('idempotency', {
  idempotency_key_invalid: { status: 400, message: 'Idempotency-Key must be 1 to 255 printable ASCII characters.' },
  idempotency_key_reused: {
    status: 409,
    message: 'This Idempotency-Key was used within the last 24 hours for a different request (another body, route or caller).',
  },
  idempotency_key_in_use: { status: 409, message: 'A request with this Idempotency-Key is still running. Retry later.' },
});
