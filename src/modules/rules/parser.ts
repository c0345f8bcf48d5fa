/**
 * Recursive-descent parser of access rules (grammar in docs/rules.md):
 *
 *   expr    := and ('||' and)*
 *   and     := unary ('&&' unary)*
 *   unary   := '!' unary | primary
 *   primary := '(' expr ')' | 'true' | 'false' | 'exists' operand | lookup | operand tail
 *   tail    := ('=' | '!=' | '<' | '<=' | '>' | '>=') operand | 'in' '[' literal (',' literal)* ']'
 *   lookup  := '@collection' '.' name '(' expr ')'
 *   operand := literal | path | '@auth' '.' path | '@request' '.' 'key' | '@data' '.' path | '$outer' '.' path
 *
 * There are no function calls: a name followed by '(' is refused, whatever the name.
 */
import type { CompareOp, Expr, Literal, Operand } from './ast.js';
import { RuleSyntaxError } from './errors.js';
import { tokenize, type Token } from './tokenizer.js';

const COMPARE = new Set(['=', '!=', '<', '<=', '>', '>=']);
const MAX_DEPTH = 32;
const MAX_PATH = 8;

class Parser {
  private i = 0;
  private depth = 0;
  private lookups = 0;
  constructor(private tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.i]!;
  }
  private next(): Token {
    return this.tokens[this.i++]!;
  }
  private is(type: Token['type'], value?: string): boolean {
    const t = this.peek();
    return t.type === type && (value === undefined || t.value === value);
  }
  private expect(type: Token['type'], value: string, what: string): Token {
    if (!this.is(type, value)) this.fail(`Expected ${what}`);
    return this.next();
  }
  private fail(message: string, pos = this.peek().pos): never {
    const t = this.peek();
    throw new RuleSyntaxError(t.type === 'end' && pos === t.pos ? `${message}, found the end of the rule` : message, pos);
  }

  parse(): Expr {
    const e = this.expr();
    if (!this.is('end')) this.fail(`Unexpected '${this.peek().value}'`);
    return e;
  }

  private expr(): Expr {
    if (++this.depth > MAX_DEPTH) this.fail('The rule is nested too deeply');
    let left = this.and();
    while (this.is('op', '||')) {
      const pos = this.next().pos;
      left = { kind: 'or', pos, left, right: this.and() };
    }
    this.depth--;
    return left;
  }

  private and(): Expr {
    let left = this.unary();
    while (this.is('op', '&&')) {
      const pos = this.next().pos;
      left = { kind: 'and', pos, left, right: this.unary() };
    }
    return left;
  }

  private unary(): Expr {
    if (this.is('op', '!')) {
      const pos = this.next().pos;
      if (++this.depth > MAX_DEPTH) this.fail('The rule is nested too deeply');
      const expr = this.unary();
      this.depth--;
      return { kind: 'not', pos, expr };
    }
    return this.primary();
  }

  private primary(): Expr {
    const t = this.peek();
    if (t.type === 'punct' && t.value === '(') {
      this.next();
      const e = this.expr();
      this.expect('punct', ')', "')'");
      return e;
    }
    if (t.type === 'ident' && (t.value === 'true' || t.value === 'false') && !this.startsComparison(1)) {
      this.next();
      return { kind: 'bool', pos: t.pos, value: t.value === 'true' };
    }
    if (t.type === 'ident' && t.value === 'exists' && !this.startsComparison(1)) {
      this.next();
      return { kind: 'exists', pos: t.pos, operand: this.operand() };
    }
    if (t.type === 'at' && t.value === 'collection') return this.lookup();
    const left = this.operand();
    return this.tail(left);
  }

  /** Whether the token `ahead` places on is a comparison or `in` (then `true`/`exists` are operands/fields). */
  private startsComparison(ahead: number): boolean {
    const t = this.tokens[this.i + ahead]!;
    return (t.type === 'op' && COMPARE.has(t.value)) || (t.type === 'ident' && t.value === 'in');
  }

  private tail(left: Operand): Expr {
    const t = this.peek();
    if (t.type === 'op' && COMPARE.has(t.value)) {
      this.next();
      return { kind: 'cmp', pos: left.pos, op: t.value as CompareOp, left, right: this.operand() };
    }
    if (t.type === 'ident' && t.value === 'in') {
      this.next();
      this.expect('punct', '[', "'[' after in");
      const values: Literal[] = [];
      if (!this.is('punct', ']')) {
        do values.push(this.literal());
        while (this.is('punct', ',') && this.next());
      }
      this.expect('punct', ']', "',' or ']'");
      return { kind: 'in', pos: left.pos, left, values };
    }
    if (t.type === 'punct' && t.value === '(') this.fail('Function calls are not allowed in rules', t.pos);
    this.fail('Expected a comparison (=, !=, <, <=, >, >=, in)');
  }

  private lookup(): Expr {
    const at = this.next();
    if (++this.lookups > 4) this.fail('A rule has at most 4 lookups', at.pos);
    this.expect('punct', '.', "'.' after @collection");
    const name = this.peek();
    if (name.type !== 'ident') this.fail('Expected a collection name');
    this.next();
    this.expect('punct', '(', "'(' after the collection name");
    const where = this.expr();
    this.expect('punct', ')', "')'");
    return { kind: 'lookup', pos: at.pos, collection: name.value, where };
  }

  private literal(): Literal {
    const t = this.peek();
    if (t.type === 'string') return this.next(), { kind: 'lit', pos: t.pos, value: t.value };
    if (t.type === 'number') {
      const n = Number(t.value);
      if (!Number.isFinite(n)) this.fail('Number out of range');
      return this.next(), { kind: 'lit', pos: t.pos, value: n };
    }
    if (t.type === 'ident' && (t.value === 'true' || t.value === 'false')) return this.next(), { kind: 'lit', pos: t.pos, value: t.value === 'true' };
    if (t.type === 'ident' && t.value === 'null') return this.next(), { kind: 'lit', pos: t.pos, value: null };
    this.fail('Expected a value (a string, number, true, false or null)');
  }

  private path(): string[] {
    const parts: string[] = [];
    do {
      const t = this.peek();
      if (t.type !== 'ident') this.fail('Expected a field name');
      parts.push(this.next().value);
      if (parts.length > MAX_PATH) this.fail('A field path has at most 8 parts', t.pos);
    } while (this.is('punct', '.') && this.next());
    return parts;
  }

  private operand(): Operand {
    const t = this.peek();
    if (t.type === 'string' || t.type === 'number') return this.literal();
    if (t.type === 'ident') {
      if (['true', 'false', 'null'].includes(t.value)) return this.literal();
      const path = this.path();
      if (this.is('punct', '(')) this.fail('Function calls are not allowed in rules');
      return { kind: 'field', pos: t.pos, path };
    }
    if (t.type === 'outer') {
      this.next();
      this.expect('punct', '.', "'.' after $outer");
      return { kind: 'outer', pos: t.pos, path: this.path() };
    }
    if (t.type === 'at') {
      this.next();
      this.expect('punct', '.', `'.' after @${t.value}`);
      if (t.value === 'auth') return { kind: 'auth', pos: t.pos, path: this.path() };
      if (t.value === 'data') return { kind: 'data', pos: t.pos, path: this.path() };
      if (t.value === 'request') {
        const name = this.path();
        if (name.length !== 1 || name[0] !== 'key') this.fail('Only @request.key is known', t.pos);
        return { kind: 'request', pos: t.pos, name: 'key' };
      }
      if (t.value === 'collection') this.fail('A lookup is a condition, not a value', t.pos);
      this.fail(`Unknown '@${t.value}': use @auth, @data, @request or @collection`, t.pos);
    }
    this.fail('Expected a field, a value or @auth/@data/@request');
  }
}

export function parseRule(text: string): Expr {
  return new Parser(tokenize(text)).parse();
}
