/** Error catalogue of outbound webhooks (docs/webhooks.md). */
import { defineErrors } from '../../lib/errors.js';

export const WebhookErrors = defineErrors('webhooks', {
  webhook_endpoint_not_found: { status: 404, message: 'Webhook endpoint not found.' },
  webhook_delivery_not_found: { status: 404, message: 'Webhook delivery not found.' },
  webhook_url_invalid: { status: 400, message: 'The endpoint URL must be an absolute https URL of a public host.' },
  webhook_endpoints_limit: { status: 403, message: 'Too many webhook endpoints for this project.' },
});
