/**
 * S3-compatible backend (AWS, R2, MinIO, Supabase...) through @aws-sdk/client-s3. Uploads go
 * straight to the bucket on a presigned PUT (600 s) whose signature covers Content-Length and
 * Content-Type, so the store itself rejects a different size or type.
 */
import type { Readable } from 'node:stream';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { publicOnlyLookup } from '../../../lib/public-network.js';
import { encodePath } from '../paths.js';
import { SIGNED_URL_TTL_SECONDS } from '../signing.js';
import type { ObjectInfo, PresignInput, StorageDriver } from './types.js';

/** Calls to the store are small (HEAD, DELETE, LIST: uploads go from the client to the bucket). */
const CONNECT_TIMEOUT_MS = 5000;
const REQUEST_TIMEOUT_MS = 15_000;
/** Parts of a streamed upload (writeStream): S3's minimum is 5 MB. */
const PART_BYTES = 8 * 1024 * 1024;

type Sdk = typeof import('@aws-sdk/client-s3') & Pick<typeof import('@aws-sdk/s3-request-presigner'), 'getSignedUrl'>;
let loading: Promise<Sdk> | null = null;

/**
 * The AWS SDK (about 20 MB of a node's memory) loads with the first call to a store, not at
 * start: a node on local storage, the default, never needs it.
 */
function sdk(): Promise<Sdk> {
  loading ??= Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/s3-request-presigner')]).then(([s3, presigner]) => ({
    ...s3,
    getSignedUrl: presigner.getSignedUrl,
  }));
  return loading;
}

export interface S3Settings {
  bucket: string;
  region: string;
  endpoint?: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle?: boolean;
  publicUrl?: string;
}

export class S3Driver implements StorageDriver {
  readonly kind = 's3' as const;
  readonly noPublicUrlWarning: string;
  private readonly config: S3ClientConfig;
  private built: Promise<{ sdk: Sdk; client: S3Client }> | null = null;

  /** `publicOnly`: connect only to public addresses (a tenant's own bucket: SSRF guard). */
  constructor(private s: S3Settings, opts: { publicOnly?: boolean } = {}) {
    this.config = {
      region: s.region,
      endpoint: s.endpoint,
      forcePathStyle: s.forcePathStyle ?? false,
      credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey },
      // Presigned PUTs must not carry a checksum of an empty body.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 2,
      // A store that does not answer fails the call (503 storage_unavailable), not the request's patience.
      requestHandler: {
        connectionTimeout: CONNECT_TIMEOUT_MS,
        requestTimeout: REQUEST_TIMEOUT_MS,
        ...(opts.publicOnly && { httpAgent: { lookup: publicOnlyLookup }, httpsAgent: { lookup: publicOnlyLookup } }),
      },
    };
    this.noPublicUrlWarning =
      'Upload confirmed, but this bucket has no public URL host. Set publicUrl (a public bucket URL or custom domain) to get file URLs.';
  }

  /** The SDK and this bucket's client, built on first use. */
  private async store(): Promise<{ sdk: Sdk; client: S3Client }> {
    this.built ??= sdk().then((loaded) => ({ sdk: loaded, client: new loaded.S3Client(this.config) }));
    return this.built;
  }

  async presignPut(input: PresignInput): Promise<string> {
    const { sdk, client } = await this.store();
    const command = new sdk.PutObjectCommand({
      Bucket: this.s.bucket,
      Key: input.path,
      ContentType: input.contentType,
      ContentLength: input.size,
    });
    const seconds = Math.round((input.expiresAt.getTime() - input.signedAt.getTime()) / 1000);
    return sdk.getSignedUrl(client, command, {
      expiresIn: Math.max(1, Math.min(SIGNED_URL_TTL_SECONDS, seconds)),
      signingDate: input.signedAt,
      signableHeaders: new Set(['content-type', 'content-length']),
    });
  }

  async presignGet(path: string, signedAt: Date, expiresAt: Date): Promise<string> {
    const { sdk, client } = await this.store();
    const command = new sdk.GetObjectCommand({ Bucket: this.s.bucket, Key: path });
    const seconds = Math.round((expiresAt.getTime() - signedAt.getTime()) / 1000);
    return sdk.getSignedUrl(client, command, { expiresIn: Math.max(1, seconds), signingDate: signedAt });
  }

  async head(path: string): Promise<ObjectInfo | null> {
    const { sdk, client } = await this.store();
    try {
      const out = await client.send(new sdk.HeadObjectCommand({ Bucket: this.s.bucket, Key: path }));
      return { size: out.ContentLength ?? 0 };
    } catch (err) {
      if (err instanceof sdk.S3ServiceException && err.$metadata.httpStatusCode === 404) return null;
      throw err;
    }
  }

  async read(path: string, maxBytes: number): Promise<Buffer | null | 'too_large'> {
    const { sdk, client } = await this.store();
    try {
      const out = await client.send(new sdk.GetObjectCommand({ Bucket: this.s.bucket, Key: path }));
      if ((out.ContentLength ?? 0) > maxBytes) {
        await out.Body?.transformToWebStream().cancel();
        return 'too_large';
      }
      return Buffer.from((await out.Body?.transformToByteArray()) ?? []);
    } catch (err) {
      if (err instanceof sdk.S3ServiceException && err.$metadata.httpStatusCode === 404) return null;
      throw err;
    }
  }

  async readHead(path: string, n: number): Promise<Buffer | null> {
    const { sdk, client } = await this.store();
    try {
      const out = await client.send(new sdk.GetObjectCommand({ Bucket: this.s.bucket, Key: path, Range: `bytes=0-${n - 1}` }));
      return Buffer.from((await out.Body?.transformToByteArray()) ?? []).subarray(0, n);
    } catch (err) {
      if (err instanceof sdk.S3ServiceException && [404, 416].includes(err.$metadata.httpStatusCode ?? 0)) return null;
      throw err;
    }
  }

  async putBuffer(path: string, body: Buffer, contentType: string): Promise<void> {
    const { sdk, client } = await this.store();
    await client.send(new sdk.PutObjectCommand({ Bucket: this.s.bucket, Key: path, Body: body, ContentType: contentType }));
  }

  /**
   * A multipart upload of PART_BYTES parts, one part in memory at a time; an object shorter than
   * one part is a single PutObject. A failure aborts the upload (no parts left billed).
   */
  async writeStream(path: string, body: Readable, contentType: string): Promise<number> {
    const { sdk, client } = await this.store();
    let part: Buffer[] = [];
    let partBytes = 0;
    let total = 0;
    let uploadId: string | undefined;
    const parts: Array<{ ETag?: string; PartNumber: number }> = [];
    const send = async () => {
      const Body = Buffer.concat(part);
      part = [];
      partBytes = 0;
      uploadId ??= (await client.send(new sdk.CreateMultipartUploadCommand({ Bucket: this.s.bucket, Key: path, ContentType: contentType }))).UploadId;
      const PartNumber = parts.length + 1;
      const out = await client.send(new sdk.UploadPartCommand({ Bucket: this.s.bucket, Key: path, UploadId: uploadId, PartNumber, Body, ContentLength: Body.length }));
      parts.push({ ETag: out.ETag, PartNumber });
    };
    try {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        part.push(chunk);
        partBytes += chunk.length;
        total += chunk.length;
        if (partBytes >= PART_BYTES) await send();
      }
      if (!uploadId) {
        const Body = Buffer.concat(part);
        await client.send(new sdk.PutObjectCommand({ Bucket: this.s.bucket, Key: path, Body, ContentLength: Body.length, ContentType: contentType }));
        return total;
      }
      if (partBytes > 0) await send();
      await client.send(new sdk.CompleteMultipartUploadCommand({ Bucket: this.s.bucket, Key: path, UploadId: uploadId, MultipartUpload: { Parts: parts } }));
      return total;
    } catch (err) {
      if (uploadId) await client.send(new sdk.AbortMultipartUploadCommand({ Bucket: this.s.bucket, Key: path, UploadId: uploadId })).catch(() => {});
      throw err;
    }
  }

  async readStream(path: string): Promise<Readable | null> {
    const { sdk, client } = await this.store();
    try {
      const out = await client.send(new sdk.GetObjectCommand({ Bucket: this.s.bucket, Key: path }));
      return (out.Body as Readable | undefined) ?? null;
    } catch (err) {
      if (err instanceof sdk.S3ServiceException && err.$metadata.httpStatusCode === 404) return null;
      throw err;
    }
  }

  async remove(paths: string[]): Promise<void> {
    const { sdk, client } = await this.store();
    for (let i = 0; i < paths.length; i += 1000) {
      const Objects = paths.slice(i, i + 1000).map((Key) => ({ Key }));
      await client.send(new sdk.DeleteObjectsCommand({ Bucket: this.s.bucket, Delete: { Objects, Quiet: true } }));
    }
  }

  async removePrefix(prefix: string): Promise<void> {
    const { sdk, client } = await this.store();
    let token: string | undefined;
    do {
      const page = await client.send(
        new sdk.ListObjectsV2Command({ Bucket: this.s.bucket, Prefix: `${prefix}/`, ContinuationToken: token }),
      );
      const keys = (page.Contents ?? []).map((o) => o.Key).filter((k): k is string => !!k);
      if (keys.length) await this.remove(keys);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  publicUrl(path: string): string | null {
    if (this.s.publicUrl) return `${this.s.publicUrl.replace(/\/+$/, '')}/${encodePath(path)}`;
    if (!this.s.endpoint) return `https://${this.s.bucket}.s3.${this.s.region}.amazonaws.com/${encodePath(path)}`;
    return null;
  }
}
