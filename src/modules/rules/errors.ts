/** Error catalogue of access rules (docs/rules.md). */
import { defineErrors } from '../../lib/errors.js';

export const RuleErrors = defineErrors('rules', {
  rule_invalid: { status: 400, message: 'Invalid rule.' },
  rule_preview_invalid: { status: 400, message: 'This preview needs a document id or data for its action.' },
  rule_cycle: {
    status: 400,
    message: "These access rules look collections up in a loop (a collection's rule reaches, through the read rules of the collections it looks up, back to one already on the way), which PostgreSQL cannot evaluate.",
  },
  rule_denied: { status: 403, message: "The collection's access rules do not allow this." },
});

/** A rule the grammar or the type check refuses, with the offset it points at. */
export class RuleSyntaxError extends Error {
  constructor(
    message: string,
    readonly pos: number,
  ) {
    super(`${message} (at character ${pos + 1})`);
  }
}
