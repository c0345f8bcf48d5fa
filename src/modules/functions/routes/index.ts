/** The functions routes: HTTP functions on the public API, their deploy and secrets on the dashboard. */
import { defineRoutes } from '../../../route-groups.js';
import functionRoutes from './functions.js';
import httpFunctionRoutes from './http.js';
import secretRoutes from './secrets.js';

export const functionsPublicRoutes = [defineRoutes('apiKey', httpFunctionRoutes)];
export const functionsDashboardRoutes = [defineRoutes('operator', functionRoutes, secretRoutes)];
