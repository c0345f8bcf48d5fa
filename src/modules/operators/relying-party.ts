/**
 * The console's WebAuthn relying party: its id is the host of DASHBOARD_URL (PUBLIC_URL by
 * default) and the one allowed origin is that URL's origin, where the console at /_/ runs. A
 * passkey registered there works for every Plinth node behind the same address. Browsers
 * refuse an IP address as relying party id: serve the console on a name (`localhost` locally).
 */
import type { AppContext } from '../../context.js';
import type { RelyingParty } from '../../lib/identity/passkeys.js';

export function consoleRelyingParty(ctx: AppContext): RelyingParty {
  const url = new URL(ctx.config.dashboardUrl);
  return { rpId: url.hostname, origins: [url.origin], name: 'Plinth console' };
}
