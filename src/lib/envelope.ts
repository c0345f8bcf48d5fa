/** The success envelope of docs/wire-compatibility.md §1.2: `{success, data, message}`. */
export interface Envelope<T> {
  success: true;
  data: T;
  message: string;
}

export function ok<T>(data: T, message = ''): Envelope<T> {
  return { success: true, data, message };
}

/** The content type of an envelope sent as text (okJson, a replayed idempotent answer): Fastify's own for objects. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * `ok(data, message)` serialized, with `data` given as JSON text already (documents spliced
 * from PostgreSQL's text, src/modules/data/view.ts). Send it with a JSON content type.
 */
export function okJson(dataJson: string, message = ''): string {
  return `{"success":true,"data":${dataJson},"message":${JSON.stringify(message)}}`;
}

/** Message-only success: the message is also put inside `data`, so SDK callers keep it. */
export function done(message: string): Envelope<{ message: string }> {
  return { success: true, data: { message }, message };
}

export interface ErrorBody {
  success: false;
  data: Record<string, never>;
  message: string;
  error: string;
  code: string;
}

export function errorBody(message: string, code: string, extra: Record<string, unknown> = {}): ErrorBody {
  return { ...extra, success: false, data: {}, message, error: message, code };
}
