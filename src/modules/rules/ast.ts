/**
 * The syntax tree of an access rule (docs/rules.md). Every node keeps `pos`, the offset of its
 * first character in the rule text, so a type error can point at it.
 */
export type Literal = { kind: 'lit'; pos: number; value: string | number | boolean | null };

/** A field of the document the rule is about (`published`, `meta.views`, `id`). */
export type Field = { kind: 'field'; pos: number; path: string[] };
/** `$outer.x` inside a lookup: a field of the document the enclosing rule is about. */
export type OuterField = { kind: 'outer'; pos: number; path: string[] };
/** `@auth.id`, `@auth.kind`, `@auth.<users field>`. */
export type AuthRef = { kind: 'auth'; pos: number; path: string[] };
/** `@request.key`: the key kind (publishable or secret). */
export type RequestRef = { kind: 'request'; pos: number; name: 'key' };
/** `@data.x`: the incoming document on create and update. */
export type DataRef = { kind: 'data'; pos: number; path: string[] };

export type Operand = Literal | Field | OuterField | AuthRef | RequestRef | DataRef;

export type CompareOp = '=' | '!=' | '<' | '<=' | '>' | '>=';

export type Expr =
  | { kind: 'or' | 'and'; pos: number; left: Expr; right: Expr }
  | { kind: 'not'; pos: number; expr: Expr }
  | { kind: 'cmp'; pos: number; op: CompareOp; left: Operand; right: Operand }
  | { kind: 'in'; pos: number; left: Operand; values: Literal[] }
  | { kind: 'exists'; pos: number; operand: Operand }
  /** `@collection.name(cond)`: some live document of that collection of the project matches `cond`. */
  | { kind: 'lookup'; pos: number; collection: string; where: Expr }
  | { kind: 'bool'; pos: number; value: boolean };
