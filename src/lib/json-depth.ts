/**
 * The one nesting guard for JSON a client sends (request bodies through the JSON parser of
 * src/plugins/json-body.ts, cursors, model answers): a document deeper than MAX_JSON_DEPTH
 * levels of objects/arrays is refused before anything parses or walks it, so no recursive code
 * (validation, JSON.stringify, PostgreSQL's jsonb input) ever meets 5 000 levels.
 */
export const MAX_JSON_DEPTH = 32;

const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/**
 * Whether the JSON text nests deeper than `max` (one linear scan of the text, strings skipped).
 * Malformed text is left to the parser: this only counts brackets outside strings.
 */
export function jsonTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > max) return true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    }
  }
  return false;
}
