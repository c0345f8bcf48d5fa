/** Public social sign-in routes (/api/userAuth/social/*). */
import { defineRoutes } from '../../../route-groups.js';
import socialCallbackFlow from './callback.js';
import socialExchangeFlow from './exchange.js';
import socialLinkFlow from './link.js';
import socialStartFlow from './start.js';

export default [
  defineRoutes('apiKey', socialStartFlow, socialExchangeFlow),
  // A guest links an identity to itself: its access token is the credential.
  defineRoutes('endUser', socialLinkFlow),
  // The provider redirects the browser here: the state cookie and the signed state are the credential.
  defineRoutes('public', socialCallbackFlow),
];
