/** The AI domain's dashboard routes: key settings and the AI features. */
import { defineRoutes } from '../../../route-groups.js';
import queryBuilderRoute from './query-builder.js';
import schemaSuggestRoute from './schema-suggest.js';
import setAccountKeyRoute from './set-account-key.js';
import setProjectKeyRoute from './set-project-key.js';

export default [defineRoutes('operator', setAccountKeyRoute, setProjectKeyRoute, queryBuilderRoute, schemaSuggestRoute)];
