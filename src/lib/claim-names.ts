/**
 * What may name a custom claim of an access token: what a token-claims function may write
 * (src/modules/functions/auth-hooks.ts) and what an access rule may read as `@auth.claims.<name>`
 * (src/modules/rules/compile.ts). One rule for both, so a rule can name every claim a hook can
 * write and nothing a hook could not.
 */
export const MAX_CLAIM_NAME_CHARS = 100;
const RESERVED = new Set(['__proto__', 'constructor', 'prototype']);

/** Whether `name` can be a claim's name: not empty, at most 100 characters, not `__proto__`/`constructor`/`prototype`. */
export function isClaimName(name: string): boolean {
  return name.length > 0 && name.length <= MAX_CLAIM_NAME_CHARS && !RESERVED.has(name);
}
