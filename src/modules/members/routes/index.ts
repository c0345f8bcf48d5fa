/** Teams' routes (docs/teams.md), by authentication group. */
import { defineRoutes } from '../../../route-groups.js';
import accountRoutes from './account.js';
import { invitationAcceptRoute, invitationLookupRoute } from './invitations.js';
import memberRoutes from './members.js';

export default [defineRoutes('public', invitationLookupRoute), defineRoutes('operator', memberRoutes, invitationAcceptRoute, accountRoutes)];
