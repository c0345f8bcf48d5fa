/** Kysely types of this domain's tables (migrations/005_storage.sql creates them). */
import type { ColumnType } from 'kysely';
import type { Timestamp } from '../../db/types.js';

export type FileStatus = 'pending' | 'confirmed';
export type FileProvider = 'internal' | 'external';

export interface FilesTable {
  project_id: string;
  id: string;
  path: string;
  owner_id: string | null;
  size: number;
  content_type: string;
  provider: FileProvider;
  status: ColumnType<FileStatus, FileStatus | undefined, FileStatus>;
  created_at: Timestamp;
  confirmed_at: Timestamp | null;
  /** true/false set for this file; null follows the project's default (settings.files.private). */
  private: ColumnType<boolean | null, boolean | null | undefined, boolean | null>;
}

/** What @tus/server keeps per resumable upload (migrations/033_resumable_uploads.sql). */
export interface UploadSessionsTable {
  id: string;
  project_id: string;
  value: unknown;
  created_at: ColumnType<Date, Date | undefined, never>;
}

/** Leases of resumable uploads: one PATCH at a time per upload, across nodes. */
export interface UploadLocksTable {
  id: string;
  holder: string;
  expires_at: Timestamp;
  release_requested: ColumnType<boolean, boolean | undefined, boolean>;
}

export interface StorageTables {
  files: FilesTable;
  upload_sessions: UploadSessionsTable;
  upload_locks: UploadLocksTable;
}
