/** A project's WebAuthn relying party (settings.passkeys). */
import type { RelyingParty } from '../../lib/identity/passkeys.js';
import type { ProjectRecord } from '../projects/cache.js';
import { PasskeyErrors } from './errors.js';

/** The project's relying party (settings.passkeys), or 422 when it has none. */
export function relyingPartyOf(project: ProjectRecord): RelyingParty {
  const s = project.settings.passkeys as { rpId?: unknown; origins?: unknown } | undefined;
  if (typeof s?.rpId !== 'string' || !Array.isArray(s.origins) || !s.origins.length) throw PasskeyErrors.passkeys_not_configured();
  return { rpId: s.rpId, origins: s.origins as string[], name: project.name };
}
