/** A JSON object (not null, not an array): what request bodies, documents and model answers must be. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
