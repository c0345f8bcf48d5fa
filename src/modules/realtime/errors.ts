/** Error catalogue of the realtime API (docs/realtime.md). */
import { defineErrors } from '../../lib/errors.js';

export const RealtimeErrors = defineErrors('realtime', {
  ticket_invalid: { status: 401, message: 'The realtime ticket is invalid or has expired. Ask for a new one.' },
  subscriptions_invalid: { status: 400, message: 'Give 1 or more subscriptions: { collection, filter? }.' },
  collection_not_streaming: { status: 400, message: 'This collection does not stream its changes. Turn realtime on for it first.' },
  too_many_subscriptions: { status: 429, message: 'Too many subscriptions on one stream.' },
  too_many_streams: { status: 429, message: 'Too many open realtime streams for this project.' },
});
