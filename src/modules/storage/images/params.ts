/**
 * Transform parameters: parsed, clamped and written in one canonical form (the derivative's
 * cache key and the text a signed transform URL covers). Anything unknown or out of range is a
 * 400, never silently a different image.
 */
import { StorageErrors } from '../errors.js';

export const FITS = ['cover', 'contain', 'inside'] as const;
export const FORMATS = ['webp', 'avif', 'jpeg', 'png', 'auto'] as const;
export type Fit = (typeof FITS)[number];
export type OutFormat = Exclude<(typeof FORMATS)[number], 'auto'>;

export const MAX_SIDE = 2500;

export interface Transform {
  width: number | null;
  height: number | null;
  fit: Fit;
  format: (typeof FORMATS)[number];
  quality: number;
}

export interface TransformQuery {
  width?: string;
  height?: string;
  fit?: string;
  format?: string;
  quality?: string;
}

/** Whether a query asks for a transformation at all. */
export const wantsTransform = (q: TransformQuery) => ['width', 'height', 'fit', 'format', 'quality'].some((k) => q[k as keyof TransformQuery] !== undefined);

function int(v: string | undefined, name: string, min: number, max: number): number | null {
  if (v === undefined || v === '') return null;
  if (!/^\d{1,5}$/.test(v) || Number(v) < min || Number(v) > max) throw StorageErrors.transform_invalid(`${name} must be an integer from ${min} to ${max}.`);
  return Number(v);
}

function oneOf<T extends string>(v: string | undefined, name: string, list: readonly T[], def: T): T {
  if (v === undefined || v === '') return def;
  if (!(list as readonly string[]).includes(v)) throw StorageErrors.transform_invalid(`${name} must be one of ${list.join(', ')}.`);
  return v as T;
}

export function parseTransform(q: TransformQuery): Transform {
  const width = int(q.width, 'width', 1, MAX_SIDE);
  const height = int(q.height, 'height', 1, MAX_SIDE);
  return {
    width,
    height,
    fit: oneOf(q.fit, 'fit', FITS, 'cover'),
    format: oneOf(q.format, 'format', FORMATS, 'auto'),
    quality: int(q.quality, 'quality', 20, 100) ?? 80,
  };
}

/** The canonical text of a transform (signed, and hashed into the derivative's name). */
export function canonical(t: Transform): string {
  return `w=${t.width ?? ''}&h=${t.height ?? ''}&fit=${t.fit}&format=${t.format}&q=${t.quality}`;
}

/** The query string of a transform, as the render route reads it. */
export function transformQuery(t: Transform): Record<string, string> {
  const q: Record<string, string> = { fit: t.fit, format: t.format, quality: String(t.quality) };
  if (t.width) q.width = String(t.width);
  if (t.height) q.height = String(t.height);
  return q;
}

/** `auto`: WebP where the client takes it, else PNG for PNG originals and JPEG otherwise. */
export function outputFormat(t: Transform, accept: string | undefined, input: string): OutFormat {
  if (t.format !== 'auto') return t.format;
  if (/image\/webp/i.test(accept ?? '')) return 'webp';
  return input === 'png' ? 'png' : 'jpeg';
}
