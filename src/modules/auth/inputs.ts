/** Field checks shared by the flows, with urBackend's messages (docs/wire-compatibility.md §2.4, §2.13). */
import { Type } from '@sinclair/typebox';
import { AuthErrors } from './errors.js';
import { isEmail, normalizeEmail } from '../../lib/email.js';

export const EmailBody = Type.Object({ email: Type.String({ maxLength: 320 }) });

export function checkEmail(raw: unknown): string {
  if (typeof raw !== 'string' || !raw.trim()) throw AuthErrors.invalid_input('Email is required.');
  const email = normalizeEmail(raw);
  if (email.length > 100) throw AuthErrors.invalid_input('Email is too long.');
  if (!isEmail(email)) throw AuthErrors.invalid_input('Invalid email format.');
  return email;
}

/** Passwords are 6–100 characters (the upper bound also caps hashing work per request). */
export function checkNewPassword(raw: unknown, label = 'Password'): string {
  if (typeof raw !== 'string' || raw.length < 6) throw AuthErrors.invalid_input(`${label} must be at least 6 characters.`);
  if (raw.length > 100) throw AuthErrors.invalid_input(`${label} is too long.`);
  return raw;
}

export function checkOtp(raw: unknown): string {
  if (typeof raw !== 'string' || !/^\d{6}$/.test(raw)) throw AuthErrors.invalid_input('OTP must be 6 digits');
  return raw;
}
