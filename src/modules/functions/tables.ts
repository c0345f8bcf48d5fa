/** Kysely types of the functions domain's tables (migrations/068_functions.sql). */
import type { Generated, JSONColumnType } from 'kysely';
import type { Timestamp } from '../../db/types.js';
import type { Encrypted } from '../../lib/crypto.js';
import type { LogLine } from './sandbox/protocol.js';

export type FunctionKind = 'http' | 'before' | 'after' | 'auth' | 'schedule';

export interface FunctionsTable {
  id: string;
  project_id: string;
  name: string;
  kind: FunctionKind;
  trigger: JSONColumnType<Record<string, unknown>>;
  enabled: Generated<boolean>;
  active_version: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface FunctionVersionsTable {
  function_id: string;
  version: number;
  project_id: string;
  language: 'js' | 'ts';
  source: string;
  compiled: string;
  hash: string;
  created_at: Timestamp;
}

export interface FunctionSecretsTable {
  project_id: string;
  name: string;
  value: JSONColumnType<Encrypted>;
  updated_at: Timestamp;
}

export interface FunctionInvocationsTable {
  id: Generated<string>;
  project_id: string;
  function_id: string;
  version: number;
  trigger: string;
  ok: boolean;
  error_code: string | null;
  error: string | null;
  duration_ms: number;
  cpu_ms: number;
  logs: JSONColumnType<LogLine[]>;
  logs_dropped: Generated<number>;
  at: Timestamp;
}

export interface FunctionTables {
  functions: FunctionsTable;
  function_versions: FunctionVersionsTable;
  function_secrets: FunctionSecretsTable;
  function_invocations: FunctionInvocationsTable;
}
