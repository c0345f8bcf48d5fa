/**
 * Rule text → tokens. Only the forms the grammar knows are produced; any other character is an
 * error pointing at it. String literals are decoded here (`"a\"b"`), and never reach SQL as
 * text: the compiler quotes the decoded value (compile.ts).
 */
import { RuleSyntaxError } from './errors.js';

export type TokenType = 'ident' | 'at' | 'outer' | 'string' | 'number' | 'op' | 'punct' | 'end';

export interface Token {
  type: TokenType;
  /** Identifiers: the name (`@auth` as 'auth'); strings: the decoded value; numbers/ops: the text. */
  value: string;
  pos: number;
}

/** Longest first, so `<=` is not read as `<` then `=`. */
const OPS = ['&&', '||', '!=', '<=', '>=', '=', '<', '>', '!'];
const PUNCT = new Set(['(', ')', '[', ']', ',', '.']);
const IDENT = /[A-Za-z_][A-Za-z0-9_]*/y;
const NUMBER = /-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/y;
const MAX_LENGTH = 2000;

function readString(text: string, start: number): { value: string; end: number } {
  const quote = text[start]!;
  let out = '';
  for (let i = start + 1; i < text.length; i++) {
    const c = text[i]!;
    if (c === quote) return { value: out, end: i + 1 };
    if (c === '\\') {
      const next = text[i + 1];
      if (next === undefined) break;
      out += next === 'n' ? '\n' : next === 't' ? '\t' : next;
      i++;
    } else out += c;
  }
  throw new RuleSyntaxError('Unterminated string', start);
}

function match(re: RegExp, text: string, at: number): string | null {
  re.lastIndex = at;
  const m = re.exec(text);
  return m ? m[0] : null;
}

export function tokenize(text: string): Token[] {
  if (text.length > MAX_LENGTH) throw new RuleSyntaxError(`A rule is at most ${MAX_LENGTH} characters`, MAX_LENGTH);
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '"' || c === "'") {
      const s = readString(text, i);
      out.push({ type: 'string', value: s.value, pos: i });
      i = s.end;
      continue;
    }
    if (c === '@' || c === '$') {
      const name = match(IDENT, text, i + 1);
      if (!name) throw new RuleSyntaxError(`Expected a name after '${c}'`, i);
      if (c === '$' && name !== 'outer') throw new RuleSyntaxError(`Unknown '$${name}': only $outer is known`, i);
      out.push({ type: c === '@' ? 'at' : 'outer', value: name, pos: i });
      i += 1 + name.length;
      continue;
    }
    const prev = out[out.length - 1];
    // A minus sign starts a number only where an operand is expected (there is no subtraction).
    const num = /[0-9.]/.test(c) || (c === '-' && (!prev || prev.type === 'op' || (prev.type === 'punct' && prev.value !== ')' && prev.value !== ']')))
      ? match(NUMBER, text, i)
      : null;
    if (num && !(c === '.' && prev?.type === 'ident')) {
      out.push({ type: 'number', value: num, pos: i });
      i += num.length;
      continue;
    }
    const ident = match(IDENT, text, i);
    if (ident) {
      out.push({ type: 'ident', value: ident, pos: i });
      i += ident.length;
      continue;
    }
    const op = OPS.find((o) => text.startsWith(o, i));
    if (op) {
      out.push({ type: 'op', value: op, pos: i });
      i += op.length;
      continue;
    }
    if (PUNCT.has(c)) {
      out.push({ type: 'punct', value: c, pos: i });
      i++;
      continue;
    }
    throw new RuleSyntaxError(`Unexpected character '${c}'`, i);
  }
  out.push({ type: 'end', value: '', pos: text.length });
  return out;
}
