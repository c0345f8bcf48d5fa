/** The realtime API: tickets with the API key (or, for the console, as the project's owner), streams with a ticket (docs/realtime.md). */
import { defineRoutes } from '../../../route-groups.js';
import streamRoute from './stream.js';
import operatorTicketRoute from './operator-ticket.js';
import ticketRoute from './ticket.js';

export default [defineRoutes('apiKey', ticketRoute), defineRoutes('public', streamRoute), defineRoutes('operator', operatorTicketRoute)];
