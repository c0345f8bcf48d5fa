/** Rule text → policy SQL, or the error a developer sees (docs/rules.md). */
import { compileRule, type CompileContext } from './compile.js';
import { RuleErrors, RuleSyntaxError } from './errors.js';
import { parseRule } from './parser.js';

/** Compiles one rule; a refused rule is 400 rule_invalid with the action and the position. */
export function compileRuleText(text: string, ctx: CompileContext): string {
  try {
    return compileRule(parseRule(text), ctx);
  } catch (err) {
    if (err instanceof RuleSyntaxError) {
      throw RuleErrors.rule_invalid(`Invalid ${ctx.action} rule: ${err.message}.`, { action: ctx.action, position: err.pos + 1 });
    }
    throw err;
  }
}
