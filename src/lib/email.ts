/** Email addresses, for operators, end users and mail recipients alike. */

/** A plain address: no spaces, angle brackets, quotes or list separators; a dotted domain. */
const ADDRESS = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[^\s@<>(),;:"]+$/;

export function isEmail(value: string): boolean {
  return ADDRESS.test(value);
}

/** Emails are compared and stored lower-cased and trimmed. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
