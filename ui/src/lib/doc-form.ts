/**
 * The document form's model: a document becomes one text draft per declared top-level field
 * (what the inputs hold) plus the undeclared keys as JSON, and back. Converting back never
 * guesses: a draft that is not a number, a date or JSON stays as typed, so the pre-save check
 * (validate.ts, the server's messages) names the field.
 */
import type { FieldDef, FieldType } from './types.js';
import { withoutSystem } from './validate.js';

export type Draft = Record<string, string | boolean>;

export interface FormState {
  drafts: Draft;
  /** Undeclared keys of the document, as JSON text ('' when none). */
  extra: string;
}

/** Strings longer than this, or with a line break, are edited in a text area. */
export const LONG_STRING = 60;

export function isLongString(v: unknown): boolean {
  return typeof v === 'string' && (v.length > LONG_STRING || v.includes('\n'));
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** An ISO instant as the value of a datetime-local input (the browser's local time). */
export function toLocalInput(v: unknown): string {
  if (typeof v !== 'string' && typeof v !== 'number') return '';
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) return String(v);
  const ms = d.getMilliseconds();
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}${ms ? `.${pad(ms, 3)}` : ''}`;
}

/** A datetime-local value back to an ISO instant ('' stays '', nonsense stays as typed). */
export function fromLocalInput(s: string): string {
  if (!s) return '';
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? s : d.toISOString();
}

export function draftOf(type: FieldType, v: unknown): string | boolean {
  if (v === undefined || v === null) return type === 'Boolean' ? false : '';
  switch (type) {
    case 'Boolean':
      return v === true;
    case 'Date':
      return toLocalInput(v);
    case 'Object':
    case 'Array':
      return JSON.stringify(v, null, 2);
    default:
      return typeof v === 'string' ? v : JSON.stringify(v);
  }
}

export function toForm(fields: FieldDef[], doc: Record<string, unknown> | null): FormState {
  const drafts: Draft = {};
  const src = doc ? withoutSystem(doc) : {};
  for (const f of fields) {
    const v = Object.hasOwn(src, f.key) ? src[f.key] : doc ? undefined : f.default;
    drafts[f.key] = draftOf(f.type, v);
  }
  const declared = new Set(fields.map((f) => f.key));
  const rest = Object.fromEntries(Object.entries(src).filter(([k]) => !declared.has(k)));
  return { drafts, extra: Object.keys(rest).length ? JSON.stringify(rest, null, 2) : '' };
}

/** One draft back to a value; undefined when the input is empty. */
export function valueOf(type: FieldType, draft: string | boolean): unknown {
  if (typeof draft === 'boolean') return draft;
  if (draft.trim() === '') return type === 'String' && draft !== '' ? draft : undefined;
  switch (type) {
    case 'Number': {
      const n = Number(draft);
      return Number.isFinite(n) ? n : draft;
    }
    case 'Date':
      return fromLocalInput(draft);
    case 'Object':
    case 'Array':
      try {
        return JSON.parse(draft);
      } catch {
        return draft;
      }
    default:
      return draft;
  }
}

export type FormResult = { ok: true; value: Record<string, unknown> } | { ok: false; message: string; field?: string };

/**
 * The document the form describes. For an update (`original` given), a field emptied in the
 * form is sent as null (a merge update keeps keys it is not given); a new document leaves
 * empty optional fields out. Undeclared keys come from the JSON box.
 */
export function fromForm(fields: FieldDef[], state: FormState, original: Record<string, unknown> | null): FormResult {
  const out: Record<string, unknown> = {};
  if (state.extra.trim()) {
    let extra: unknown;
    try {
      extra = JSON.parse(state.extra);
    } catch (e) {
      return { ok: false, message: `Other keys: not valid JSON (${(e as Error).message}).`, field: '' };
    }
    if (typeof extra !== 'object' || extra === null || Array.isArray(extra)) return { ok: false, message: 'Other keys must be a JSON object.', field: '' };
    Object.assign(out, extra);
  }
  const before = original ? withoutSystem(original) : {};
  for (const f of fields) {
    const draft = state.drafts[f.key] ?? (f.type === 'Boolean' ? false : '');
    const v = valueOf(f.type, draft);
    if (v !== undefined) {
      // An untouched, absent Boolean stays absent (an unticked box is not a value).
      if (f.type === 'Boolean' && v === false && !Object.hasOwn(before, f.key) && !f.required) continue;
      out[f.key] = v;
    } else if (original && Object.hasOwn(before, f.key) && before[f.key] !== null) {
      out[f.key] = null;
    }
  }
  if (original) {
    for (const k of Object.keys(before)) if (!Object.hasOwn(out, k)) out[k] = null;
  }
  return { ok: true, value: out };
}

/** The field a validation message names (`Field 'price' must be…`), for pointing at it. */
export function fieldOfMessage(message: string): string | undefined {
  const m = /^Field '([^'.[]+)/.exec(message);
  return m?.[1];
}

/** The scalar types a grid cell can be edited in place. */
export const INLINE_TYPES = new Set<FieldType>(['String', 'Number', 'Boolean', 'Date', 'Ref']);
