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
}

export interface StorageTables {
  files: FilesTable;
}
