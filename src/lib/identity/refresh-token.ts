/**
 * Refresh tokens for operators and end users: one way to make, store and judge them. The
 * secret is 256 random bits (base64url), stored only as its SHA-256; every use rotates it.
 * A presented token that is the real secret of a session no longer live (used, revoked or
 * expired) is a replay: the token leaked, and the caller revokes the session's whole family.
 * Anything else that does not match is simply unknown: it revokes nothing and tells nothing.
 *
 * End users' tokens are `<sessionId>.<secret>` (the SDK's wire form): the session is found by
 * its random id and the hash compared in constant time. Operators' tokens are the bare secret,
 * found by its hash (a unique index over SHA-256 of 256 random bits is no timing oracle).
 */
import { randomToken, safeEqual, sha256Hex } from '../crypto.js';

export interface RefreshSecret {
  secret: string;
  tokenHash: string;
}

export function newRefreshSecret(): RefreshSecret {
  const secret = randomToken(32);
  return { secret, tokenHash: sha256Hex(secret) };
}

export const refreshTokenHash = (secret: string): string => sha256Hex(secret);

/** Random 32-hex ids; 24-hex ObjectIds issued before migration 014 stay valid until they rotate. */
const ID_SECRET_RE = /^([0-9a-f]{32}|[0-9a-f]{24})\.([A-Za-z0-9_-]{43})$/;

/** Splits an `<id>.<secret>` token; null when it is not in that form. */
export function parseIdSecretToken(raw: string): { id: string; secret: string } | null {
  const m = ID_SECRET_RE.exec(raw);
  return m ? { id: m[1]!, secret: m[2]! } : null;
}

export interface StoredRefreshSession {
  token_hash: string;
  used_at?: Date | string | null;
  revoked_at?: Date | string | null;
  expires_at?: Date | string | null;
}

/**
 * Judges a token that could not be rotated (its session was not live). `replayed` only for the
 * real secret of a known session: the caller revokes that session's family.
 */
export function rejectionOf(row: StoredRefreshSession | undefined, presentedHash: string): 'replayed' | 'unknown' {
  return row && safeEqual(row.token_hash, presentedHash) ? 'replayed' : 'unknown';
}
