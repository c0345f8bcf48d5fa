/** Shapes the dashboard API answers (the parts the console reads). */
/** A member's role in a project (docs/teams.md). */
export type Role = 'owner' | 'admin' | 'developer' | 'viewer';
export type FieldType = 'String' | 'Number' | 'Boolean' | 'Date' | 'Object' | 'Array' | 'Ref';
export const FIELD_TYPES: FieldType[] = ['String', 'Number', 'Boolean', 'Date', 'Object', 'Array', 'Ref'];
export const SCALAR_TYPES = new Set<FieldType>(['String', 'Number', 'Boolean', 'Date', 'Ref']);

export interface FieldDef {
  key: string;
  type: FieldType;
  required?: boolean;
  unique?: boolean;
  searchable?: boolean;
  default?: unknown;
  /** Allowed values of a String or Number field (docs/data.md, "Allowed values"). */
  enum?: Array<string | number>;
  ref?: string;
  /** Only the secret key (and the console) may set it (docs/rules.md, "Field protection"). */
  readOnly?: boolean;
  /** Kept from other readers: "owner" (the owner and the secret key) or "secret" (the secret key only). */
  hidden?: 'owner' | 'secret';
  items?: Omit<FieldDef, 'key'> & { key?: string };
  fields?: FieldDef[];
}

export interface Rls {
  enabled: boolean;
  mode: string;
  ownerField: string;
  requireAuthForWrite: boolean;
}

export interface Collection {
  _id: string;
  name: string;
  model: FieldDef[];
  rls: Rls;
  indexes: Array<{ fields: string[] }>;
  /** Streams its changes (the records view is then live). */
  realtime?: boolean;
  searchLanguage?: string;
  schemaVersion: number;
  createdAt: string;
  updatedAt: string;
}

export interface Usage {
  used: number;
  limit: number;
}

export interface ProjectSummary {
  _id: string;
  name: string;
  description: string;
  siteUrl: string | null;
  collectionsCount: number;
  metrics: { database: Usage; storage: Usage };
  createdAt: string;
  /** The signed-in operator's role in the project. */
  role?: Role;
}

export interface Project extends ProjectSummary {
  plan: string;
  requireEmailVerification: boolean;
  isAuthEnabled: boolean;
  allowedDomains: string[];
  providerFromEmail: string;
  hasProviderApiKey: boolean;
  hasMailWebhookSecret: boolean;
  hasAiKey: boolean;
  collections: Array<{ _id: string; name: string }>;
}

export interface Operator {
  _id: string;
  email: string;
  name: string | null;
  plan: 'free' | 'pro';
  isVerified: boolean;
  isAdmin: boolean;
}

export type Doc = Record<string, unknown> & { _id: string };

export interface ListPage {
  items: Doc[];
  total: number | null;
  nextCursor?: string | null;
  limit: number;
}
