/**
 * A read rule evaluated in memory, for realtime's matcher (src/modules/realtime/event.ts): the
 * same answer as the compiled policy (compile.ts) for a changed document, with SQL's
 * three-valued logic (a comparison with a missing value is unknown, and unknown is "no").
 * Rules that need the database (a lookup, `@auth.<users field>`) are not evaluated here:
 * `inMemoryRule` returns null for them and the caller refuses (fail closed).
 */
import type { FieldDef } from '../../db/types.js';
import { valueAtPath } from '../data/doc-path.js';
import type { Expr, Operand } from './ast.js';
import { parseRule } from './parser.js';

export interface RuleSubject {
  id: string;
  data: Record<string, unknown>;
  createdMs: number;
  updatedMs: number;
}
export interface RuleCaller {
  userId: string | null;
  keyKind: string;
}
export type RuleTest = (doc: RuleSubject, caller: RuleCaller) => boolean;

type V = string | number | null;

function declared(fields: FieldDef[], path: string[]): FieldDef | undefined {
  let list: FieldDef[] | undefined = fields;
  let def: FieldDef | undefined;
  for (const seg of path) {
    def = list?.find((f) => f.key === seg);
    list = def?.type === 'Object' ? def.fields : undefined;
  }
  return def;
}

/** Whether the rule can be judged without the database. */
function needsDatabase(e: Expr): boolean {
  switch (e.kind) {
    case 'or':
    case 'and':
      return needsDatabase(e.left) || needsDatabase(e.right);
    case 'not':
      return needsDatabase(e.expr);
    case 'lookup':
      return true;
    case 'cmp':
      return [e.left, e.right].some(authField);
    case 'in':
      return authField(e.left);
    case 'exists':
      return authField(e.operand);
    default:
      return false;
  }
}
const authField = (o: Operand) => o.kind === 'auth' && !['id', 'kind'].includes(o.path[0]!);

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

function value(o: Operand, fields: FieldDef[], doc: RuleSubject, caller: RuleCaller): V {
  switch (o.kind) {
    case 'lit':
      return o.value === null ? null : typeof o.value === 'boolean' ? String(o.value) : o.value;
    case 'auth':
      return o.path[0] === 'id' ? caller.userId : caller.keyKind;
    case 'request':
      return caller.keyKind;
    case 'field':
    case 'data':
    case 'outer': {
      const name = o.path.join('.');
      if (name === 'id' || name === '_id') return doc.id;
      if (name === 'createdAt') return doc.createdMs;
      if (name === 'updatedAt') return doc.updatedMs;
      const v = valueAtPath(doc.data, o.path);
      if (declared(fields, o.path)?.type === 'Number') return typeof v === 'number' && Number.isFinite(v) ? v : null;
      if (v === undefined || v === null) return null;
      return typeof v === 'string' ? v : JSON.stringify(v);
    }
  }
}

/** A date literal compared with createdAt/updatedAt: as epoch milliseconds. */
function timeOf(o: Operand, v: V): V {
  return o.kind === 'lit' && typeof v === 'string' ? Date.parse(v) : v;
}
const isTime = (o: Operand) => (o.kind === 'field' || o.kind === 'data') && o.path.length === 1 && (o.path[0] === 'createdAt' || o.path[0] === 'updatedAt');

function evaluate(e: Expr, fields: FieldDef[], doc: RuleSubject, caller: RuleCaller): boolean | null {
  const ev = (x: Expr) => evaluate(x, fields, doc, caller);
  switch (e.kind) {
    case 'bool':
      return e.value;
    case 'or': {
      const l = ev(e.left);
      const r = ev(e.right);
      return l === true || r === true ? true : l === null || r === null ? null : false;
    }
    case 'and': {
      const l = ev(e.left);
      const r = ev(e.right);
      return l === false || r === false ? false : l === null || r === null ? null : true;
    }
    case 'not':
      return !(ev(e.expr) ?? false);
    case 'exists':
      return value(e.operand, fields, doc, caller) !== null;
    case 'in': {
      const v = value(e.left, fields, doc, caller);
      if (e.values.length === 0) return false;
      if (v === null) return null;
      return e.values.some((l) => value(l, fields, doc, caller) === v);
    }
    case 'cmp': {
      let l = value(e.left, fields, doc, caller);
      let r = value(e.right, fields, doc, caller);
      const nullLeft = e.left.kind === 'lit' && e.left.value === null;
      if (nullLeft || (e.right.kind === 'lit' && e.right.value === null)) {
        const v = nullLeft ? r : l;
        return e.op === '=' ? v === null : v !== null;
      }
      if (isTime(e.left) || isTime(e.right)) [l, r] = [timeOf(e.left, l), timeOf(e.right, r)];
      if (l === null || r === null) return null;
      const c = typeof l === 'number' && typeof r === 'number' ? l - r : byteOrder(String(l), String(r));
      return { '=': c === 0, '!=': c !== 0, '<': c < 0, '<=': c <= 0, '>': c > 0, '>=': c >= 0 }[e.op];
    }
    case 'lookup':
      return null;
  }
}

/**
 * The in-memory test of a stored (already validated) read rule, or null when the rule needs
 * the database. `fields`: the collection's schema, which types the values as the policy does.
 */
const memo = new WeakMap<object, RuleTest | null>();
const DENY: RuleTest = () => false;

/** The read rule of a collection definition (view, else list) in memory, memoised per definition. */
export function readRuleTest(col: {
  rules: { view: string | null; list: string | null } | null;
  rules_broken?: Partial<Record<string, string>> | null;
  fields: FieldDef[];
}): RuleTest | null {
  if (!memo.has(col)) {
    const action = col.rules?.view != null ? 'view' : col.rules?.list != null ? 'list' : null;
    // A read rule marked broken denies everything (its policy is `false`; docs/rules.md).
    const broken = action !== null && !!col.rules_broken && Object.hasOwn(col.rules_broken, action);
    memo.set(col, action === null ? null : broken ? DENY : inMemoryRule(col.rules![action]!, col.fields));
  }
  return memo.get(col)!;
}

export function inMemoryRule(text: string, fields: FieldDef[]): RuleTest | null {
  const expr = parseRule(text);
  if (needsDatabase(expr)) return null;
  return (doc, caller) => evaluate(expr, fields, doc, caller) === true;
}
