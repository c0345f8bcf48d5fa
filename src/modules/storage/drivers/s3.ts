/**
 * S3-compatible backend (AWS, R2, MinIO, Supabase...) through @aws-sdk/client-s3. Uploads go
 * straight to the bucket on a presigned PUT (600 s) whose signature covers Content-Length and
 * Content-Type, so the store itself rejects a different size or type.
 */
import {
  DeleteObjectsCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { publicOnlyLookup } from '../../../lib/public-network.js';
import { encodePath } from '../paths.js';
import { SIGNED_URL_TTL_SECONDS } from '../signing.js';
import type { ObjectInfo, PresignInput, StorageDriver } from './types.js';

/** Calls to the store are small (HEAD, DELETE, LIST: uploads go from the client to the bucket). */
const CONNECT_TIMEOUT_MS = 5000;
const REQUEST_TIMEOUT_MS = 15_000;

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
  private readonly client: S3Client;

  /** `publicOnly`: connect only to public addresses (a tenant's own bucket: SSRF guard). */
  constructor(private s: S3Settings, opts: { publicOnly?: boolean } = {}) {
    this.client = new S3Client({
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
    });
    this.noPublicUrlWarning =
      'Upload confirmed, but this bucket has no public URL host. Set publicUrl (a public bucket URL or custom domain) to get file URLs.';
  }

  async presignPut(input: PresignInput): Promise<string> {
    const command = new PutObjectCommand({
      Bucket: this.s.bucket,
      Key: input.path,
      ContentType: input.contentType,
      ContentLength: input.size,
    });
    const seconds = Math.round((input.expiresAt.getTime() - input.signedAt.getTime()) / 1000);
    return getSignedUrl(this.client, command, {
      expiresIn: Math.max(1, Math.min(SIGNED_URL_TTL_SECONDS, seconds)),
      signingDate: input.signedAt,
      signableHeaders: new Set(['content-type', 'content-length']),
    });
  }

  async head(path: string): Promise<ObjectInfo | null> {
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: this.s.bucket, Key: path }));
      return { size: out.ContentLength ?? 0 };
    } catch (err) {
      if (err instanceof S3ServiceException && err.$metadata.httpStatusCode === 404) return null;
      throw err;
    }
  }

  async remove(paths: string[]): Promise<void> {
    for (let i = 0; i < paths.length; i += 1000) {
      const Objects = paths.slice(i, i + 1000).map((Key) => ({ Key }));
      await this.client.send(new DeleteObjectsCommand({ Bucket: this.s.bucket, Delete: { Objects, Quiet: true } }));
    }
  }

  async removePrefix(prefix: string): Promise<void> {
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.s.bucket, Prefix: `${prefix}/`, ContinuationToken: token }),
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
