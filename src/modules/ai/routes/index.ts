/** The AI domain's dashboard routes: key settings and the AI features. */
import type { AppContext } from '../../../context.js';
import type { App } from '../../../server.js';
import queryBuilderRoute from './query-builder.js';
import schemaSuggestRoute from './schema-suggest.js';
import setAccountKeyRoute from './set-account-key.js';
import setProjectKeyRoute from './set-project-key.js';

export default async function aiRoutes(app: App, ctx: AppContext): Promise<void> {
  await setAccountKeyRoute(app, ctx);
  await setProjectKeyRoute(app, ctx);
  await queryBuilderRoute(app, ctx);
  await schemaSuggestRoute(app, ctx);
}
