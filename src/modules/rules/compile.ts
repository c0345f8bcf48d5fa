/**
 * A parsed rule → the SQL of a row-level-security policy expression, type-checked against the
 * collection's schema on the way (an unknown field or a mismatched comparison is an error at
 * its position).
 *
 * Nothing of the rule's text is copied into the SQL: names come from the schema (a field the
 * schema does not declare is refused) and are quoted with escapeLiteral / escapeIdentifier, and
 * values are the parser's decoded literals, quoted with escapeLiteral. The only SQL the compiler
 * writes itself is fixed text: operators, the leakproof field accessors that the collection's
 * indexes are built on (plinth_num, plinth_key, plinth_txt: migrations/003, 025), and the scope
 * functions (plinth_user_id(), plinth_key_kind(), plinth_auth_user(): sql/00_functions.sql,
 * sql/25_rules_functions.sql).
 */
import { escapeIdentifier as ident, escapeLiteral as lit } from 'pg';
import type { FieldDef } from '../../db/types.js';
import { KEY_PREFIX_CHARS } from '../data/fields.js';
import type { CompareOp, Expr, Literal, Operand } from './ast.js';
import { RuleSyntaxError } from './errors.js';
import { isClaimName, MAX_CLAIM_NAME_CHARS } from '../../lib/claim-names.js';

export type RuleAction = 'list' | 'view' | 'create' | 'update' | 'delete';

export interface RuleCollection {
  id: string;
  fields: FieldDef[];
  /**
   * The project's `users` collection: its documents are app_users rows (docs/rules.md, "The
   * users collection"), so its fields are read from that table: `email` is its column,
   * `password` is never readable, custom fields are in `data`.
   */
  users?: boolean;
}

/** Columns of app_users that are fields of the users schema (the rest of a user is `data`). */
const USER_COLUMNS = new Map<string, { type: Type; column: string }>([['email', { type: 'txt', column: 'email' }]]);

export interface CompileContext {
  collection: RuleCollection;
  action: RuleAction;
  /** The project's collections by name (lookups); never another project's. */
  lookup: (name: string) => RuleCollection | undefined;
  /** Fields of the project's `users` collection (`@auth.<field>`), if it has one. */
  userFields: FieldDef[];
}

/**
 * 'txt' values include Booleans, stored and compared as 'true' / 'false' text (plinth_txt).
 * 'claim': a token claim (`@auth.claims.x`), JSON of no declared type: it takes the type of
 * what it is compared with (claimAs).
 */
type Type = 'num' | 'txt' | 'bool' | 'ts' | 'null' | 'claim';

interface Value {
  type: Type;
  sql: string;
  /** Claims: the JSON object holding the claim and its name, read as text or number once the type is known. */
  claim?: { parent: string; key: string };
  /** Top-level non-unique Strings: the plinth_key expression their index is built on (migrations/025). */
  prefix?: string;
  pos: number;
}

const SYSTEM = new Map<string, { type: Type; column: string }>([
  ['id', { type: 'txt', column: 'id' }],
  ['_id', { type: 'txt', column: 'id' }],
  ['createdAt', { type: 'ts', column: 'created_at' }],
  ['updatedAt', { type: 'ts', column: 'updated_at' }],
]);
const AUTH_BUILTIN = new Map<string, Type>([['id', 'txt'], ['email', 'txt'], ['verified', 'bool'], ['kind', 'txt']]);


/**
 * The token's claims (plinth_claims(), sql/25_rules_functions.sql) as a scalar sub-select:
 * PostgreSQL reads and parses the setting once per statement (an InitPlan), not once per row.
 */
const CLAIMS = '(SELECT plinth_claims())';

/** A claim read as `type`: text for strings and Booleans ('true'/'false', as documents store them), a number only from a JSON number. */
function claimAs(v: Value, type: Type): Value {
  if (v.type !== 'claim') return v;
  const { parent, key } = v.claim!;
  const num = type === 'num';
  return { type: num ? 'num' : type === 'bool' ? 'bool' : 'txt', sql: `${num ? 'plinth_num' : 'plinth_txt'}(${parent}, ${lit(key)})`, pos: v.pos };
}

/** The row a field refers to: unqualified (the policy's table) or through an alias/table name. */
interface Row {
  qualifier: string | null;
  collection: RuleCollection;
  /** The outer document of a lookup probe (planProbes): its columns are stand-ins, not a table. */
  probe?: boolean;
}

/**
 * A lookup planned on its own (the index warning, docs/rules.md): the looked-up partition under a
 * condition where the outer document's columns are scope settings, values PostgreSQL cannot
 * know at planning time, as the outer row's are when the lookup runs.
 */
export interface LookupProbe {
  collection: string;
  collectionId: string;
  sql: string;
}

/** What a probe puts in place of the outer document's columns: stable, unknown when planned. */
const PROBE_COLUMN = new Map([
  ['data', `current_setting('plinth.rule_probe', true)::jsonb`],
  ['id', `current_setting('plinth.rule_probe', true)`],
  ['created_at', `current_setting('plinth.rule_probe', true)::timestamptz`],
  ['updated_at', `current_setting('plinth.rule_probe', true)::timestamptz`],
]);

function typeOf(def: FieldDef): Type {
  return def.type === 'Number' ? 'num' : def.type === 'Boolean' ? 'bool' : 'txt';
}

function declaredAt(fields: FieldDef[], path: string[]): FieldDef | undefined {
  let list: FieldDef[] | undefined = fields;
  let def: FieldDef | undefined;
  for (const seg of path) {
    def = list?.find((f) => f.key === seg);
    if (!def) return undefined;
    list = def.type === 'Object' ? def.fields : undefined;
  }
  return def;
}

class Compiler {
  private aliases = 0;
  /** Set by planProbes: each lookup's probe, innermost first. */
  probes: LookupProbe[] | null = null;
  constructor(private ctx: CompileContext) {}

  /** The row `$outer` and `@data` inside a lookup refer to: the policy's own table (or, probing, its stand-ins). */
  private outerRow(): Row {
    return { qualifier: this.outerName(), collection: this.ctx.collection, probe: this.probes !== null };
  }

  private get top(): Row {
    return { qualifier: null, collection: this.ctx.collection };
  }

  /** A field of `row`, through the accessor its index uses (top level) or the same accessor on its parent object. */
  private field(row: Row, path: string[], pos: number, what: string): Value {
    const col = (c: string) => (row.probe ? PROBE_COLUMN.get(c)! : row.qualifier ? `${row.qualifier}.${ident(c)}` : ident(c));
    const sys = path.length === 1 ? SYSTEM.get(path[0]!) ?? (row.collection.users ? USER_COLUMNS.get(path[0]!) : undefined) : undefined;
    if (sys) return { type: sys.type, sql: col(sys.column), pos };
    // A user's password is only ever a hash the publishable role cannot read (migrations/063).
    if (row.collection.users && path[0] === 'password') throw new RuleSyntaxError(`'password' is a hidden field: rules cannot read it`, pos);
    const def = declaredAt(row.collection.fields, path);
    if (!def) throw new RuleSyntaxError(`Unknown field '${path.join('.')}' in ${what}`, pos);
    if (def.type === 'Object' || def.type === 'Array') throw new RuleSyntaxError(`'${path.join('.')}' is an ${def.type}: compare one of its scalar fields`, pos);
    // Hidden values are kept outside `data` (docs/rules.md, "Field protection"): a rule on one
    // would always be false, and its answers an oracle for the value.
    if (def.hidden) throw new RuleSyntaxError(`'${path.join('.')}' is a hidden field: rules cannot read it`, pos);
    const key = path[path.length - 1]!;
    const parent = path.length === 1 ? col('data') : `(${col('data')} #> ${lit(`{${path.slice(0, -1).map((p) => JSON.stringify(p)).join(',')}}`)})`;
    const type = typeOf(def);
    const fn = type === 'num' ? 'plinth_num' : 'plinth_txt';
    const v: Value = { type, sql: `${fn}(${parent}, ${lit(key)})`, pos };
    if (def.type === 'String' && !def.unique && path.length === 1 && !row.collection.users) v.prefix = `plinth_key(${col('data')}, ${lit(key)})`;
    return v;
  }

  /** `@auth.claims.<name>` (`.<name>` again for a nested object): a claim of the caller's token, null without it. */
  private claim(names: string[], pos: number): Value {
    for (const n of names) {
      // The names a token-claims function may write (the tokenizer keeps them to letters, digits and `_`).
      if (!isClaimName(n)) throw new RuleSyntaxError(`'${n.slice(0, MAX_CLAIM_NAME_CHARS)}' cannot be a claim name`, pos);
    }
    const key = names[names.length - 1]!;
    const parent = names.length === 1 ? CLAIMS : `(${CLAIMS} #> ${lit(`{${names.slice(0, -1).map((p) => JSON.stringify(p)).join(',')}}`)})`;
    return { type: 'claim', sql: `plinth_txt(${parent}, ${lit(key)})`, claim: { parent, key }, pos };
  }

  private auth(path: string[], pos: number): Value {
    const [name, ...rest] = path;
    // `@auth.claims` alone is still a users field of that name, if one is declared.
    if (name === 'claims' && rest.length) return this.claim(rest, pos);
    if (rest.length) throw new RuleSyntaxError('@auth fields are top-level fields of the users collection', pos);
    if (name === 'id') return { type: 'txt', sql: 'plinth_user_id()', pos };
    if (name === 'kind') return { type: 'txt', sql: 'plinth_key_kind()', pos };
    if (name === 'password') throw new RuleSyntaxError('@auth.password is not available to rules', pos);
    const builtin = AUTH_BUILTIN.get(name!);
    const def = builtin ? undefined : this.ctx.userFields.find((f) => f.key === name);
    if (!builtin && (!def || !['String', 'Number', 'Boolean', 'Date', 'Ref'].includes(def.type))) {
      throw new RuleSyntaxError(`Unknown field '@auth.${name}': declare it as a scalar field of the users collection`, pos);
    }
    // A "secret" one is the secret key's only, even for its user: a rule would be an oracle for it.
    if (def?.hidden) throw new RuleSyntaxError(`'@auth.${name}' is a hidden field: rules cannot read it`, pos);
    const type = builtin ?? typeOf(def!);
    // A scalar sub-select: PostgreSQL runs it once per statement (an InitPlan), not once per row.
    return { type, sql: `${type === 'num' ? 'plinth_num' : 'plinth_txt'}((SELECT plinth_auth_user()), ${lit(name!)})`, pos };
  }

  private operand(o: Operand, row: Row): Value {
    switch (o.kind) {
      case 'lit':
        return this.literal(o);
      case 'field':
        return this.field(row, o.path, o.pos, row.qualifier ? 'the looked-up collection' : 'this collection');
      case 'outer':
        if (!row.qualifier) throw new RuleSyntaxError('$outer is only meaningful inside @collection lookups', o.pos);
        return this.field(this.outerRow(), o.path, o.pos, 'this collection');
      case 'data':
        if (this.ctx.action !== 'create' && this.ctx.action !== 'update') {
          throw new RuleSyntaxError('@data is only available in create and update rules', o.pos);
        }
        // The incoming document is the row the policy checks (the new row; docs/rules.md).
        return this.field(row.qualifier ? this.outerRow() : this.top, o.path, o.pos, 'this collection');
      case 'auth':
        return this.auth(o.path, o.pos);
      case 'request':
        return { type: 'txt', sql: 'plinth_key_kind()', pos: o.pos };
    }
  }

  /** The policy's own table, by name: how a sub-select refers to the row the policy is about. */
  private outerName(): string {
    return this.ctx.collection.users ? ident('app_users') : ident(`documents_${this.ctx.collection.id}`);
  }

  private literal(l: Literal): Value {
    if (l.value === null) return { type: 'null', sql: 'NULL', pos: l.pos };
    if (typeof l.value === 'number') return { type: 'num', sql: `${lit(String(l.value))}::float8`, pos: l.pos };
    if (typeof l.value === 'boolean') return { type: 'bool', sql: lit(String(l.value)), pos: l.pos };
    return { type: 'txt', sql: lit(l.value), pos: l.pos };
  }

  /** A string literal compared with a timestamp: checked and normalised here, cast in SQL. */
  private coerce(v: Value, to: Type, source: Operand): Value {
    if (v.type === to || v.type === 'null') return v;
    if (to === 'ts' && v.type === 'txt' && source.kind === 'lit') {
      const d = new Date(String(source.value));
      if (Number.isNaN(d.getTime())) throw new RuleSyntaxError('Expected a date', v.pos);
      return { type: 'ts', sql: `${lit(d.toISOString())}::timestamptz`, pos: v.pos };
    }
    if (to === 'txt' && v.type === 'ts') return v;
    throw new RuleSyntaxError(`Cannot compare ${describe(to)} with ${describe(v.type)}`, v.pos);
  }

  private compare(op: CompareOp, left: Operand, right: Operand, row: Row): string {
    let l = this.operand(left, row);
    let r = this.operand(right, row);
    if (l.type === 'null' || r.type === 'null') {
      if (op !== '=' && op !== '!=') throw new RuleSyntaxError('null only compares with = and !=', left.pos);
      const v = l.type === 'null' ? r : l;
      return `${v.sql} IS ${op === '=' ? '' : 'NOT '}NULL`;
    }
    // A claim takes the other side's type (two claims compare as text); never a date's.
    if (l.type === 'claim' || r.type === 'claim') {
      if (l.type === 'ts' || r.type === 'ts') throw new RuleSyntaxError('A claim cannot be compared with a date', (l.type === 'claim' ? left : right).pos);
      const to = l.type === 'claim' ? (r.type === 'claim' ? 'txt' : r.type) : l.type;
      l = claimAs(l, to);
      r = claimAs(r, to);
    }
    if (l.type === 'ts' || r.type === 'ts') {
      l = this.coerce(l, 'ts', left);
      r = this.coerce(r, 'ts', right);
    } else if (l.type !== r.type) {
      throw new RuleSyntaxError(`Cannot compare ${describe(l.type)} with ${describe(r.type)}`, right.pos);
    }
    if ((l.type === 'bool' || r.type === 'bool') && op !== '=' && op !== '!=') {
      throw new RuleSyntaxError('true/false only compare with = and !=', left.pos);
    }
    const sqlOp = op === '!=' ? '<>' : op;
    if (op === '=' && (l.prefix || r.prefix)) return this.prefixed(l, r);
    return `${l.sql} ${sqlOp} ${r.sql}`;
  }

  /**
   * Equality on an indexed String: the index holds `plinth_key` (a 200-character prefix), so
   * the prefix is compared too (the index finds the rows), then the whole text.
   */
  private prefixed(l: Value, r: Value): string {
    const [f, other] = l.prefix ? [l, r] : [r, l];
    return `(${f.prefix} = left(${other.sql}, ${KEY_PREFIX_CHARS}) AND ${f.sql} = ${other.sql})`;
  }

  private inList(left: Operand, values: Literal[], row: Row): string {
    let l = this.operand(left, row);
    if (values.length === 0) return 'false';
    if (l.type === 'claim') {
      // A claim in a list of literals: of the literals' one type.
      const first = this.literal(values[0]!).type;
      for (const v of values) {
        if (this.literal(v).type !== first) throw new RuleSyntaxError('The values of in [...] after a claim must be of one type', v.pos);
      }
      l = claimAs(l, first === 'null' ? 'txt' : first);
    }
    const items = values.map((v) => {
      const c = this.coerce(this.literal(v), l.type, v);
      if (c.type === 'null') throw new RuleSyntaxError('null is not a value of in [...]: use = null', v.pos);
      return c.sql;
    });
    return `${l.sql} IN (${items.join(', ')})`;
  }

  private lookup(name: string, where: Expr, pos: number): string {
    const other = this.ctx.lookup(name);
    if (!other) throw new RuleSyntaxError(`Unknown collection '${name}'`, pos);
    const alias = ident(`l${++this.aliases}`);
    const inner = this.expr(where, { qualifier: alias, collection: other });
    // Users are app_users rows of the scoped project (no soft delete); that table's policies
    // for the caller (the users rules) apply to the rows looked up, as a partition's do.
    if (other.users) return `EXISTS (SELECT 1 FROM ${ident('app_users')} ${alias} WHERE ${alias}.project_id = plinth_project_id() AND (${inner}))`;
    this.probes?.push({
      collection: name,
      collectionId: other.id,
      // No `deleted_at IS NULL`: that matches every partition's partial created_at index, which
      // the planner prefers on a small partition whatever the condition; without it, only an
      // index on the condition's fields avoids reading the whole partition.
      sql: `SELECT 1 FROM ${ident(`documents_${other.id}`)} ${alias} WHERE ${alias}.project_id = plinth_project_id() AND (${inner})`,
    });
    // The looked-up partition only ever holds its collection; the project and liveness are
    // tested anyway (and the partition's own policies apply to the caller too).
    return (
      `EXISTS (SELECT 1 FROM ${ident(`documents_${other.id}`)} ${alias} ` +
      `WHERE ${alias}.project_id = plinth_project_id() AND ${alias}.deleted_at IS NULL AND (${inner}))`
    );
  }

  expr(e: Expr, row: Row = this.top): string {
    switch (e.kind) {
      case 'or':
        return `(${this.expr(e.left, row)} OR ${this.expr(e.right, row)})`;
      case 'and':
        return `(${this.expr(e.left, row)} AND ${this.expr(e.right, row)})`;
      case 'not':
        // Two-valued: a comparison with a missing value is false, so its negation is true.
        return `(NOT coalesce(${this.expr(e.expr, row)}, false))`;
      case 'bool':
        return e.value ? 'true' : 'false';
      case 'cmp':
        return this.compare(e.op, e.left, e.right, row);
      case 'in':
        return this.inList(e.left, e.values, row);
      case 'exists':
        if (e.operand.kind === 'lit') throw new RuleSyntaxError('exists needs a field', e.operand.pos);
        return `${this.operand(e.operand, row).sql} IS NOT NULL`;
      case 'lookup':
        return this.lookup(e.collection, e.where, e.pos);
    }
  }
}

function describe(t: Type): string {
  return { num: 'a number', txt: 'a string', bool: 'true/false', ts: 'a date', null: 'null', claim: 'a claim' }[t];
}

/** The policy expression of `expr` (throws RuleSyntaxError with a position). */
export function compileRule(expr: Expr, ctx: CompileContext): string {
  return new Compiler(ctx).expr(expr);
}

/** Each lookup of `expr` as a statement of its own, for EXPLAIN (the index warning). */
export function planProbes(expr: Expr, ctx: CompileContext): LookupProbe[] {
  const c = new Compiler(ctx);
  c.probes = [];
  c.expr(expr);
  return c.probes;
}

/** Whether a rule restricts rows by their own fields or lookups (else it is the same for every row). */
export function readsRows(e: Expr): boolean {
  switch (e.kind) {
    case 'or':
    case 'and':
      return readsRows(e.left) || readsRows(e.right);
    case 'not':
      return readsRows(e.expr);
    case 'lookup':
      return true;
    case 'cmp':
      return [e.left, e.right].some((o) => o.kind === 'field' || o.kind === 'data');
    case 'in':
      return e.left.kind === 'field' || e.left.kind === 'data';
    case 'exists':
      return e.operand.kind === 'field' || e.operand.kind === 'data';
    case 'bool':
      return false;
  }
}

/** The collections `e` looks up (`@collection.<name>(...)`, nested ones too), as written. */
export function lookedUpNames(e: Expr, into: Set<string> = new Set()): Set<string> {
  switch (e.kind) {
    case 'or':
    case 'and':
      lookedUpNames(e.left, into);
      return lookedUpNames(e.right, into);
    case 'not':
      return lookedUpNames(e.expr, into);
    case 'lookup':
      into.add(e.collection);
      return lookedUpNames(e.where, into);
    default:
      return into;
  }
}
