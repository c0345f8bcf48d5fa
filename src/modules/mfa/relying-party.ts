/** A project's WebAuthn relying party (settings.passkeys) and stored passkeys as the primitive reads them. */
import type { RelyingParty, StoredPasskey } from '../../lib/identity/passkeys.js';
import type { ProjectRecord } from '../projects/cache.js';
import { PasskeyErrors } from './errors.js';

/** The project's relying party (settings.passkeys), or 422 when it has none. */
export function relyingPartyOf(project: ProjectRecord): RelyingParty {
  const s = project.settings.passkeys as { rpId?: unknown; origins?: unknown } | undefined;
  if (typeof s?.rpId !== 'string' || !Array.isArray(s.origins) || !s.origins.length) throw PasskeyErrors.passkeys_not_configured();
  return { rpId: s.rpId, origins: s.origins as string[], name: project.name };
}

export const storedOf = (p: { credential_id: string; public_key?: string; counter?: string | number; transports: string[]; backup_eligible: boolean }): StoredPasskey => ({
  credentialId: p.credential_id, publicKey: p.public_key ?? '', counter: Number(p.counter ?? 0), transports: p.transports, backupEligible: p.backup_eligible,
});

