/** The realtime API: tickets with the API key, streams with a ticket (docs/realtime.md). */
import { defineRoutes } from '../../../route-groups.js';
import streamRoute from './stream.js';
import ticketRoute from './ticket.js';

export default [defineRoutes('apiKey', ticketRoute), defineRoutes('public', streamRoute)];
