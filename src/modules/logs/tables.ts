/** Kysely types of the logs domain's table (migrations/064_request_logs.sql). */
import type { Generated } from 'kysely';
import type { Timestamp } from '../../db/types.js';

export interface RequestLogsTable {
  /** Insertion order: breaks ties of `at` (the cursor is `at` and `id`). */
  id: Generated<string>;
  project_id: string;
  /** When the request arrived. */
  at: Timestamp;
  method: string;
  /** The routed route pattern (`/api/data/:collectionName`), never the raw URL. */
  route: string;
  status: number;
  duration_ms: number;
  /** The error envelope's stable code, when the answer was one. */
  code: string | null;
  /** The end user whose access token the request carried, once verified. */
  user_id: string | null;
}

export interface LogTables {
  request_logs: RequestLogsTable;
}
