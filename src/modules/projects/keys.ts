/** Project API keys: `pk_live_` / `sk_live_` + base64url(32 random bytes); stored as SHA-256 hex. */
import { randomToken, sha256Hex } from '../../lib/crypto.js';

export type ApiKeyKind = 'publishable' | 'secret';

export const KEY_PREFIX: Record<ApiKeyKind, string> = { publishable: 'pk_live_', secret: 'sk_live_' };

export function newApiKey(kind: ApiKeyKind): { raw: string; hash: string } {
  const raw = KEY_PREFIX[kind] + randomToken(32);
  return { raw, hash: sha256Hex(raw) };
}

export function keyKindOf(raw: string): ApiKeyKind {
  return raw.startsWith(KEY_PREFIX.secret) ? 'secret' : 'publishable';
}

/** A per-project JWT signing secret for end-user access tokens (stored encrypted). */
export function newJwtSecret(): string {
  return 'jwt_' + randomToken(32);
}
