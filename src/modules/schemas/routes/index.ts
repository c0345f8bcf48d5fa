/** The public schemas API under /api/schemas. */
import { defineRoutes } from '../../../route-groups.js';
import createSchemaRoute from './create.js';
import getSchemaRoute from './get.js';

export default [defineRoutes('apiKey', getSchemaRoute), defineRoutes('secretKey', createSchemaRoute)];
