/** Public social sign-in routes (/api/userAuth/social/*). */
import type { AppContext } from '../../context.js';
import type { App } from '../../server.js';
import socialCallbackFlow from './flows/callback.js';
import socialExchangeFlow from './flows/exchange.js';
import socialStartFlow from './flows/start.js';

export default async function socialRoutes(app: App, ctx: AppContext): Promise<void> {
  await socialStartFlow(app, ctx);
  await socialCallbackFlow(app, ctx);
  await socialExchangeFlow(app, ctx);
}
