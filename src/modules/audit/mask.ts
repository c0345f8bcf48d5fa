/**
 * The one masking function of the audit log: what an entry's before/after may hold. A value
 * under a secret-looking key (secret, password, hash, token, api key, private key, credential,
 * ciphertext…) becomes `[masked]` unless it is a boolean or null (the `hasClientSecret` flags
 * say whether one is set, not what it is), and a string anywhere that looks like a secret
 * (Plinth's API keys, Resend and Groq keys, webhook signing secrets, argon2 hashes, JWTs,
 * PEM blocks) is masked wherever it appears. Large values are replaced by their size and
 * SHA-256, NUL characters (which jsonb refuses) dropped.
 */
import { createHash } from 'node:crypto';

export const MASKED = '[masked]';

/** Keys whose values are secrets whatever they look like. */
const SECRET_KEY = /(secret|passw(or)?d|hash|token|api_?key|[a-z]Key$|_key$|private_?key|credential|ciphertext|encrypted|^value$|^otp$|^code_?verifier$|^recovery_?codes?$|^authorization$|^cookie$|^jwt)/i;

/** Secret-shaped strings: matched anywhere in a string value and masked in place. */
const SECRET_VALUE = new RegExp(
  [
    '\\b(?:sk|pk)_(?:live|test)_[A-Za-z0-9_-]{8,}', // Plinth API keys
    '\\bre_[A-Za-z0-9_]{8,}', // Resend
    '\\bgsk_[A-Za-z0-9_]{8,}', // Groq
    '\\bwhsec_[A-Za-z0-9+/=_-]{8,}', // webhook signing secrets
    '\\bjwt_[A-Za-z0-9_-]{16,}', // per-project JWT secrets
    '\\$argon2(?:id|i|d)\\$[^\\s"]+', // password hashes
    '\\beyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]*', // JWTs
    '-----BEGIN [A-Z ]*PRIVATE KEY-----[\\s\\S]*?-----END [A-Z ]*PRIVATE KEY-----',
  ].join('|'),
  'g',
);

/** One value (before or after) beyond this, serialised, is kept as its size and hash only. */
export const MAX_VALUE_BYTES = 16_384;
const MAX_DEPTH = 12;

function maskString(s: string): string {
  const clean = s.includes('\u0000') ? s.replaceAll('\u0000', '') : s;
  return clean.replace(SECRET_VALUE, MASKED);
}

function walk(value: unknown, depth: number): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return maskString(value);
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (Buffer.isBuffer(value)) return MASKED;
  if (depth >= MAX_DEPTH) return '[too deep]';
  if (Array.isArray(value)) return value.map((v) => walk(v, depth + 1));
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (v === undefined || typeof v === 'function') continue;
      const key = maskString(k);
      out[key] = SECRET_KEY.test(k) && v !== null && typeof v !== 'boolean' ? MASKED : walk(v, depth + 1);
    }
    return out;
  }
  return null;
}

/**
 * A value as the audit log may keep it: secrets masked, JSON only (no undefined, functions,
 * NaN), bounded in size. Pure; the same input gives the same output.
 */
export function maskSecrets(value: unknown): unknown {
  const masked = walk(value, 0);
  if (masked === null) return null;
  const text = JSON.stringify(masked);
  const bytes = Buffer.byteLength(text);
  if (bytes <= MAX_VALUE_BYTES) return masked;
  return { truncated: true, bytes, sha256: createHash('sha256').update(text).digest('hex') };
}
