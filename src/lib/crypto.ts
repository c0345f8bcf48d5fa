/**
 * Secrets at rest. Provider keys and per-project secrets are AES-256-GCM encrypted with
 * ENCRYPTION_KEY; API keys and refresh tokens are stored only as SHA-256 hashes.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Stored form of an encrypted value (docs/wire-compatibility.md §8.2): hex ciphertext, 16-byte IV and GCM tag. */
export interface Encrypted {
  encrypted: string;
  iv: string;
  tag: string;
}

export function encrypt(key: Buffer, plain: string): Encrypted {
  const iv = randomBytes(16);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const encrypted = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return { encrypted: encrypted.toString('hex'), iv: iv.toString('hex'), tag: cipher.getAuthTag().toString('hex') };
}

/** Decrypts a stored value; a tampered or undecryptable value yields null ("no key"). */
export function decrypt(key: Buffer, value: Encrypted | null | undefined): string | null {
  if (!value?.encrypted || !value.iv || !value.tag) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(value.iv, 'hex'));
    decipher.setAuthTag(Buffer.from(value.tag, 'hex'));
    return Buffer.concat([decipher.update(Buffer.from(value.encrypted, 'hex')), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

/** SHA-256 of a string (UTF-8) as hex: the one digest helper of src/ (keys, names, ETags). */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** SHA-256 of a string (UTF-8) as base64url: the shorter form, for stored fingerprints and keys. */
export function sha256Base64url(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

/** Constant-time string equality (lengths are compared through fixed-size digests). */
export function safeEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a).digest();
  const db = createHash('sha256').update(b).digest();
  return timingSafeEqual(da, db);
}

export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** A 6-digit one-time code from the CSPRNG, uniform in [100000, 999999]. */
export function sixDigitCode(): string {
  let n: number;
  do n = randomBytes(4).readUInt32BE(0); while (n >= 4_294_000_000);
  return String(100000 + (n % 900000));
}
