/**
 * @tus/server's per-upload metadata in PostgreSQL (a KvStore): the file store's `configstore`
 * and the S3 store's `cache`. Kept in the shared database so any node can resume any upload;
 * the stores' defaults (a `.json` file beside the data, an in-memory map) are per node.
 */
import { Upload, type KvStore } from '@tus/utils';
import type { Kysely } from 'kysely';
import type { Database } from '../../../database.js';
import { projectOfPath } from '../paths.js';
import { deleteSession, saveSession, sessionIds, sessionValue } from './queries.js';

/** Rebuilds class instances from JSON (the stores call Upload's getters). */
export type Revive<T> = (json: unknown) => T;

export const reviveUpload: Revive<Upload> = (json) => new Upload(json as ConstructorParameters<typeof Upload>[0]);

/** The S3 store caches `{ file: Upload, 'upload-id', 'tus-version' }`. */
export const reviveS3Metadata: Revive<{ file: Upload }> = (json) => {
  const v = json as { file: ConstructorParameters<typeof Upload>[0] };
  return { ...v, file: new Upload(v.file) };
};

export class PgKvStore<T> implements KvStore<T> {
  /**
   * `keepOnDelete`: the S3 store "clears its cache" when an upload finishes; here that row is
   * the upload's only record outside the bucket, so it stays until the file is deleted or
   * swept (ResumableUploads.forget), and a HEAD after the last PATCH still answers the offset.
   */
  constructor(private db: Kysely<Database>, private revive: Revive<T>, private opts: { keepOnDelete?: boolean } = {}) {}

  async get(key: string): Promise<T | undefined> {
    const value = await sessionValue(this.db, key);
    return value === undefined ? undefined : this.revive(value);
  }

  async set(key: string, value: T): Promise<void> {
    await saveSession(this.db, key, projectOfPath(key), value);
  }

  async delete(key: string): Promise<void> {
    if (!this.opts.keepOnDelete) await deleteSession(this.db, key);
  }

  async list(): Promise<string[]> {
    return sessionIds(this.db);
  }
}
