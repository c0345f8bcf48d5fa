/** The dashboard webhook routes under /api/projects/:projectId/webhooks. */
import { defineRoutes } from '../../../route-groups.js';
import deliveryRoutes from './deliveries.js';
import endpointRoutes from './endpoints.js';

export default [defineRoutes('operator', endpointRoutes, deliveryRoutes)];
