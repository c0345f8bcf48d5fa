/**
 * Template rendering (docs/wire-compatibility.md §7.2): `{{ path }}` inserts the value HTML-escaped in html and
 * as plain text in subject and text; `{{{ path }}}` inserts it raw. Paths are dot-separated
 * ([A-Za-z0-9_.-]); a missing value renders empty. A variable whose key ends in "url" or "uri"
 * must be an http(s) URL, else it renders empty (no javascript: links from user input).
 */
export type Variables = Record<string, unknown>;

const TAG = /\{\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}\}|\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g;
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function lookup(vars: Variables, path: string): unknown {
  let cur: unknown = vars;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object' || !Object.prototype.hasOwnProperty.call(cur, part)) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function safeUrl(value: string): string {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.toString() : '';
  } catch {
    return '';
  }
}

function valueOf(vars: Variables, path: string): string {
  const v = lookup(vars, path);
  if (v === undefined || v === null) return '';
  const text = typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /(url|uri)$/i.test(path) ? safeUrl(text) : text;
}

/** Renders one template string; `html` decides whether `{{ }}` escapes. */
export function render(template: string, vars: Variables, html: boolean): string {
  return template.replace(TAG, (_m, raw: string | undefined, escaped: string | undefined) => {
    if (raw !== undefined) return valueOf(vars, raw);
    const value = valueOf(vars, escaped!);
    return html ? escapeHtml(value) : value;
  });
}
