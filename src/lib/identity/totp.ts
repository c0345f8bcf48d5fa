/**
 * TOTP second factors (RFC 6238: SHA-1, 6 digits, 30 s) for operators and end users: one
 * implementation for both (otpauth). A code is accepted for the current step and one step on
 * either side (clock drift); the caller stores the accepted step and refuses any code of that
 * step or an older one, so a code is good once (RFC 6238 §5.2: no replay within the window).
 */
import QRCode from 'qrcode';
import { Secret, TOTP } from 'otpauth';

export const TOTP_PERIOD = 30;
const DIGITS = 6;
const WINDOW = 1;

/** A fresh 160-bit secret, base32 (what authenticator apps take). */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

function totpOf(secret: string, issuer = '', label = ''): TOTP {
  return new TOTP({ issuer, label, algorithm: 'SHA1', digits: DIGITS, period: TOTP_PERIOD, secret: Secret.fromBase32(secret) });
}

/** The `otpauth://totp/...` URI an authenticator app scans. */
export function totpUri(secret: string, issuer: string, label: string): string {
  return totpOf(secret, issuer, label).toString();
}

/** The URI as a QR code: an SVG data URL an <img> shows (no script, no external fetch). */
export async function totpQrDataUrl(uri: string): Promise<string> {
  const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
}

export const stepAt = (now: Date): number => Math.floor(now.getTime() / 1000 / TOTP_PERIOD);

/**
 * The step whose code `code` is (current ±1), or null. Exactly six digits: anything else
 * (spaces, more digits) is no code. The caller must still refuse a step ≤ the last accepted.
 */
export function matchTotp(secret: string, code: string, now: Date): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const delta = totpOf(secret).validate({ token: code, timestamp: now.getTime(), window: WINDOW });
  return delta === null ? null : stepAt(now) + delta;
}

/** The code of `now` (tests, benchmarks and the console's own checks). */
export function totpCode(secret: string, now: Date): string {
  return totpOf(secret).generate({ timestamp: now.getTime() });
}
