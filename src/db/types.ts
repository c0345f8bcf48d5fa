/**
 * The Kysely database type: the foundation tables here, and each domain's own tables from its
 * `tables.ts` (one line per domain below).
 */
import type { ColumnType, Generated, JSONColumnType } from 'kysely';
import type { Encrypted } from '../lib/crypto.js';

/** A timestamptz column: read as Date; optional on insert (the database fills it). */
export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface FieldDef {
  key: string;
  type: 'String' | 'Number' | 'Boolean' | 'Date' | 'Object' | 'Array' | 'Ref';
  required?: boolean;
  unique?: boolean;
  /** Top-level String fields only: part of the collection's full-text search (docs/data.md). */
  searchable?: boolean;
  /**
   * Top-level fields only. Scalars are indexed by default (up to 8 per collection): `false`
   * opts out, `true` takes one of the 8 first. Arrays get a GIN index only with `true`.
   */
  index?: boolean;
  default?: string | number | boolean;
  /**
   * Allowed values of a String or Number field (docs/data.md, "Allowed values"): 1 to 100
   * distinct values of the field's type; the console offers them as a select.
   */
  enum?: Array<string | number>;
  /**
   * Top-level fields only (docs/rules.md, "Field protection"): never returned to the publishable
   * key, except, for "owner", to the document's owner. Stored outside `data` (migrations/040).
   */
  hidden?: 'owner' | 'secret';
  /** Top-level fields only: set or changed with the secret key only (a trigger refuses the rest). */
  readOnly?: boolean;
  ref?: string;
  items?: { type: FieldDef['type']; fields?: FieldDef[] };
  fields?: FieldDef[];
}

/** A developer-declared compound index: top-level declared fields, in index order. */
export interface CompoundIndex {
  fields: string[];
}

export interface RlsConfig {
  enabled: boolean;
  mode: 'public-read' | 'private';
  ownerField: string;
  requireAuthForWrite: boolean;
}

/** Actions whose rule can no longer be applied, each with the reason (docs/rules.md, migrations/067). */
export type RulesBroken = Partial<Record<'list' | 'view' | 'create' | 'update' | 'delete', string>>;

/** Access rules of a collection (docs/rules.md): each an expression, or null for the RLS mode's behaviour. */
export interface RulesConfig {
  list: string | null;
  view: string | null;
  create: string | null;
  update: string | null;
  delete: string | null;
}

export interface OperatorsTable {
  id: Generated<string>;
  email: string;
  password_hash: string;
  name: string | null;
  plan: Generated<'free' | 'pro'>;
  is_verified: Generated<boolean>;
  ai_key: JSONColumnType<Encrypted | null, Encrypted | null, Encrypted | null>;
  /** Access tokens issued before this (password change or reset) are refused. */
  tokens_valid_after: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** Whether a GitHub sign-in with this account's verified email may link it (false once the operator unlinked GitHub). */
  github_link_by_email: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ProjectsTable {
  id: Generated<string>;
  owner_id: string;
  name: string;
  description: Generated<string>;
  site_url: string | null;
  publishable_key_hash: string;
  secret_key_hash: string;
  jwt_secret: JSONColumnType<Encrypted>;
  settings: JSONColumnType<Record<string, unknown>, Record<string, unknown> | undefined, Record<string, unknown>>;
  secrets: JSONColumnType<Record<string, Encrypted>, Record<string, Encrypted> | undefined, Record<string, Encrypted>>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface CollectionsTable {
  id: Generated<string>;
  project_id: string;
  name: string;
  fields: JSONColumnType<FieldDef[], FieldDef[] | undefined, FieldDef[]>;
  schema_version: Generated<number>;
  rls: JSONColumnType<RlsConfig, RlsConfig | undefined, RlsConfig>;
  indexes: JSONColumnType<CompoundIndex[], CompoundIndex[] | undefined, CompoundIndex[]>;
  /** The text search configuration of the collection's full-text search (migrations/021). */
  search_language: Generated<string>;
  /** Streams its changes to realtime subscribers (migrations/022). */
  realtime: Generated<boolean>;
  /** Access rules as written, and as compiled to policy SQL (migrations/035); null: none. */
  rules: ColumnType<RulesConfig | null, string | null | undefined, string | null>;
  rules_sql: ColumnType<Partial<RulesConfig> | null, string | null | undefined, string | null>;
  /** Per action, why the rule is broken (its rules_sql is `false`: fail closed); null: none (migrations/067). */
  rules_broken: ColumnType<RulesBroken | null, string | null | undefined, string | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface DocumentsTable {
  project_id: string;
  collection_id: string;
  id: string;
  owner_id: string | null;
  data: JSONColumnType<Record<string, unknown>>;
  size_bytes: Generated<number>;
  /** size_bytes before the latest merge update (migrations/023). */
  size_before: number | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

export interface UsageCountersTable {
  subject_id: string;
  metric: string;
  period: Generated<string>;
  used: Generated<number>;
}

export interface FoundationTables {
  operators: OperatorsTable;
  projects: ProjectsTable;
  collections: CollectionsTable;
  documents: DocumentsTable;
  usage_counters: UsageCountersTable;
}
