/** Project API keys: `pk_live_` / `sk_live_` + base64url(32 random bytes); stored as SHA-256 hex. */
import { randomToken, sha256Hex } from '../../lib/crypto.js';

export type ApiKeyKind = 'publishable' | 'secret';

export const KEY_PREFIX: Record<ApiKeyKind, string> = { publishable: 'pk_live_', secret: 'sk_live_' };

export function newApiKey(kind: ApiKeyKind): { raw: string; hash: string } {
  const raw = KEY_PREFIX[kind] + randomToken(32);
  return { raw, hash: sha256Hex(raw) };
}

/** The kind a key's prefix names; null when it has neither prefix (no stored key can match). */
export function keyKindOf(raw: string): ApiKeyKind | null {
  if (raw.startsWith(KEY_PREFIX.secret)) return 'secret';
  return raw.startsWith(KEY_PREFIX.publishable) ? 'publishable' : null;
}

/** A per-project JWT signing secret for end-user access tokens (stored encrypted). */
export function newJwtSecret(): string {
  return 'jwt_' + randomToken(32);
}
