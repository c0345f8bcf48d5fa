/**
 * The node's image renderer (sharp). Safe by construction:
 * - only raster formats, recognised from the bytes' magic numbers (file-type) before sharp sees
 *   them; SVG and anything else is refused, and sharp's other loaders are blocked process-wide;
 * - the header is read first (`metadata()`, no pixel decoded) and an image over the pixel
 *   limit refused before decoding; sharp's own `limitInputPixels` guards the decode again;
 * - one frame (`pages: 1`), a 10 s timeout, EXIF orientation applied, metadata stripped
 *   (sharp writes none unless asked);
 * - at most `concurrency` renders at once per node (p-limit), queued beyond that up to a bound,
 *   503 after; sharp works on libuv's threads, off the event loop.
 */
import { fileTypeFromBuffer } from 'file-type';
import pLimit, { type LimitFunction } from 'p-limit';
import type { Sharp } from 'sharp';
import { StorageErrors } from '../errors.js';
import { MAX_SIDE, type OutFormat, type Transform } from './params.js';

const RASTER = new Map<string, string>([
  ['image/jpeg', 'jpeg'],
  ['image/png', 'png'],
  ['image/webp', 'webp'],
  ['image/gif', 'gif'],
  ['image/avif', 'heif'],
  ['image/tiff', 'tiff'],
]);
const LOADERS = ['VipsForeignLoadJpegBuffer', 'VipsForeignLoadPngBuffer', 'VipsForeignLoadWebpBuffer', 'VipsForeignLoadGifBuffer', 'VipsForeignLoadHeifBuffer', 'VipsForeignLoadTiffBuffer'];
const MIME: Record<OutFormat, string> = { webp: 'image/webp', avif: 'image/avif', jpeg: 'image/jpeg', png: 'image/png' };

export interface Rendered {
  body: Buffer;
  contentType: string;
}

type SharpModule = (typeof import('sharp'))['default'];

export interface RendererLimits {
  concurrency: number;
  maxInputPixels: number;
  /** Renders allowed to wait for a slot; more get 503 transform_busy. */
  maxQueued?: number;
}

export class ImageRenderer {
  private readonly limit: LimitFunction;
  private readonly maxQueued: number;
  private loaded: Promise<SharpModule> | null = null;

  constructor(private limits: RendererLimits) {
    this.limit = pLimit(limits.concurrency);
    this.maxQueued = limits.maxQueued ?? 64;
  }

  /** sharp loads with the first transform (its native library is ~30 MB of a node's memory). */
  private sharp(): Promise<SharpModule> {
    this.loaded ??= import('sharp').then((m) => {
      const sharp = m.default;
      sharp.block({ operation: ['VipsForeignLoad'] });
      sharp.unblock({ operation: LOADERS });
      return sharp;
    });
    return this.loaded;
  }

  /** Renders one transform of an original (`format` resolved: never `auto`). */
  async render(input: Buffer, t: Transform & { format: OutFormat }): Promise<Rendered> {
    const kind = await fileTypeFromBuffer(input);
    const inputFormat = kind && RASTER.get(kind.mime);
    if (!inputFormat) throw StorageErrors.image_not_supported();
    if (this.limit.pendingCount >= this.maxQueued) {
      throw StorageErrors.transform_busy(undefined, undefined, { headers: { 'retry-after': '2' } });
    }
    return this.limit(() => this.run(input, t));
  }

  private async run(input: Buffer, t: Transform & { format: OutFormat }): Promise<Rendered> {
    const sharp = await this.sharp();
    const max = this.limits.maxInputPixels;
    const opts = { limitInputPixels: max, failOn: 'error' as const, pages: 1, sequentialRead: true };
    let meta;
    try {
      meta = await sharp(input, opts).metadata();
    } catch (err) {
      // sharp checks limitInputPixels against the header too.
      if (/pixel limit/i.test(String(err))) throw StorageErrors.image_too_large();
      throw StorageErrors.image_not_supported('The image could not be read.');
    }
    // Refused on the header's word, before a pixel is decoded (decompression bombs).
    if (!meta.width || !meta.height || meta.width * meta.height > max) throw StorageErrors.image_too_large();
    const format = t.format;
    const pipeline: Sharp = sharp(input, { ...opts, autoOrient: true })
      // Width and height are at most MAX_SIDE (params.ts); without either, the output is the
      // original held inside MAX_SIDE × MAX_SIDE (a second resize() would replace the first).
      .resize(
        t.width || t.height
          ? { width: t.width ?? undefined, height: t.height ?? undefined, fit: t.fit, withoutEnlargement: true }
          : { width: MAX_SIDE, height: MAX_SIDE, fit: 'inside', withoutEnlargement: true },
      )
      .toFormat(format, { quality: t.quality })
      .timeout({ seconds: 10 });
    try {
      return { body: await pipeline.toBuffer(), contentType: MIME[format] };
    } catch (err) {
      if (/pixel limit/i.test(String(err))) throw StorageErrors.image_too_large();
      throw StorageErrors.image_not_supported(`The image could not be transformed.`);
    }
  }

  /** Renders waiting or running (for metrics and the bench). */
  get load(): { active: number; pending: number } {
    return { active: this.limit.activeCount, pending: this.limit.pendingCount };
  }
}
