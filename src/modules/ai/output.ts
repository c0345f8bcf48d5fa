/**
 * Helpers for reading a model's answer: it is untrusted text. Parse it as one JSON object or
 * refuse it (422); free text that we show back (explanations) is stripped and shortened.
 */
import { jsonTooDeep } from '../../lib/json-depth.js';
import { isPlainObject } from '../../lib/objects.js';
import { AiErrors } from './errors.js';

export type Json = Record<string, unknown>;

/** The model's content as a JSON object; anything else is a 422. */
export function parseModelJson(content: string): Json {
  let value: unknown;
  try {
    if (jsonTooDeep(content)) throw new SyntaxError('nested too deeply');
    value = JSON.parse(content);
  } catch {
    throw AiErrors.ai_output_invalid('The AI model returned malformed JSON. Try rephrasing the request.');
  }
  if (!isPlainObject(value)) throw AiErrors.ai_output_invalid('The AI model did not return a JSON object. Try rephrasing the request.');
  return value;
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

export function hasControlChars(text: string): boolean {
  CONTROL.lastIndex = 0;
  return CONTROL.test(text);
}

/** A short, single-line, printable version of model text (explanations, refusal reasons). */
export function cleanText(value: unknown, max = 500): string {
  if (typeof value !== 'string') return '';
  const text = value.replace(CONTROL, ' ').replace(/\s+/g, ' ').trim();
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** When the model declined (`{"error": "..."}`), a 422 carrying its (cleaned) reason. */
export function refusalOf(answer: Json): Error | null {
  if (answer.error === undefined || answer.error === null) return null;
  const reason = cleanText(answer.error, 300) || 'no reason given';
  return AiErrors.ai_output_invalid(`The AI model could not answer this request: ${reason}`);
}
