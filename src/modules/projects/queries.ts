/** SQL of the projects domain. */
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database } from '../../database.js';
import type { Encrypted } from '../../lib/crypto.js';

export interface NewProjectRow {
  ownerId: string;
  name: string;
  description: string;
  siteUrl: string | null;
  publishableKeyHash: string;
  secretKeyHash: string;
  jwtSecret: Encrypted;
  settings: Record<string, unknown>;
}

export async function insertProject(db: Kysely<Database>, row: NewProjectRow) {
  return db
    .insertInto('projects')
    .values({
      owner_id: row.ownerId,
      name: row.name,
      description: row.description,
      site_url: row.siteUrl,
      publishable_key_hash: row.publishableKeyHash,
      secret_key_hash: row.secretKeyHash,
      jwt_secret: JSON.stringify(row.jwtSecret) as never,
      settings: JSON.stringify(row.settings) as never,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function countProjects(db: Kysely<Database>, ownerId: string): Promise<number> {
  const r = await db
    .selectFrom('projects')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('owner_id', '=', ownerId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** A row of projects, every column. */
export type ProjectRow = Selectable<Database['projects']>;

/**
 * The projects an operator is a member of (docs/teams.md), newest first, each with the
 * operator's role and the owner's plan (the project's plan).
 */
export function listMemberProjects(db: Kysely<Database>, operatorId: string) {
  return memberProjects(db, operatorId).orderBy('p.created_at', 'desc').orderBy('p.id', 'desc').execute();
}

function memberProjects(db: Kysely<Database>, operatorId: string) {
  return db
    .selectFrom('projects as p')
    .innerJoin('project_members as m', (j) => j.onRef('m.project_id', '=', 'p.id').on('m.operator_id', '=', operatorId))
    .innerJoin('operators as o', 'o.id', 'p.owner_id')
    .selectAll('p')
    .select(['m.role', 'o.plan as owner_plan']);
}

export type MemberProjectRow = Awaited<ReturnType<typeof listMemberProjects>>[number];

/** The owner's plan: the plan of the project (every member sees the same limits). */
export async function ownerPlanOf(db: Kysely<Database>, ownerId: string) {
  const r = await db.selectFrom('operators').select('plan').where('id', '=', ownerId).executeTakeFirst();
  return r?.plan ?? 'free';
}

export function collectionsOf(db: Kysely<Database>, projectId: string) {
  return db
    .selectFrom('collections')
    .select(['id', 'name', 'fields', 'rls', 'schema_version', 'created_at', 'updated_at'])
    .where('project_id', '=', projectId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export type CollectionRow = Awaited<ReturnType<typeof collectionsOf>>[number];

/** Collections per project, for a list of projects (one query). */
export async function collectionCounts(db: Kysely<Database>, projectIds: string[]): Promise<Map<string, number>> {
  if (projectIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('collections')
    .select(['project_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('project_id', 'in', projectIds)
    .groupBy('project_id')
    .execute();
  return new Map(rows.map((r) => [r.project_id, Number(r.n)]));
}

/** Lifetime usage counters (period '') of the given metrics, keyed `<projectId>:<metric>`. */
export async function usageOf(db: Kysely<Database>, projectIds: string[], metrics: string[]): Promise<Map<string, number>> {
  if (projectIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('usage_counters')
    .select(['subject_id', 'metric', 'used'])
    .where('subject_id', 'in', projectIds)
    .where('metric', 'in', metrics)
    .where('period', '=', '')
    .execute();
  return new Map(rows.map((r) => [`${r.subject_id}:${r.metric}`, Number(r.used)]));
}

export interface ProjectPatch {
  name?: string;
  description?: string;
  site_url?: string | null;
  settings?: Record<string, unknown>;
  secrets?: Record<string, Encrypted>;
  publishable_key_hash?: string;
  secret_key_hash?: string;
}

export function updateProjectRow(db: Kysely<Database>, id: string, patch: ProjectPatch, now: Date) {
  const { settings, secrets, ...plain } = patch;
  return db
    .updateTable('projects')
    .set({
      ...plain,
      ...(settings ? { settings: JSON.stringify(settings) as never } : {}),
      ...(secrets ? { secrets: JSON.stringify(secrets) as never } : {}),
      updated_at: now,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Deletes a project; its tenant rows go with it (ON DELETE CASCADE), its counters and its
 * function invocation log (no foreign key: migrations/076) explicitly.
 * `alsoInTx` runs in the same transaction (e.g. enqueueing the cleanup of what cannot cascade).
 */
export async function deleteProjectRow(db: Kysely<Database>, id: string, alsoInTx?: (tx: Kysely<Database>) => Promise<void>): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await alsoInTx?.(tx);
    await tx.deleteFrom('usage_counters').where('subject_id', '=', id).execute();
    await tx.deleteFrom('function_invocations').where('project_id', '=', id).execute();
    await tx.deleteFrom('projects').where('id', '=', id).execute();
  });
}

/**
 * A project this operator is a member of (every column, the member's role and the owner's
 * plan), or undefined: a project the operator is no member of reads as missing.
 */
export function findMemberProject(db: Kysely<Database>, projectId: string, operatorId: string) {
  return memberProjects(db, operatorId).where('p.id', '=', projectId).executeTakeFirst();
}

/** Takes the operator's row lock: project creations of one operator run one at a time. */
export async function lockOwner(db: Kysely<Database>, ownerId: string): Promise<void> {
  await db.selectFrom('operators').select('id').where('id', '=', ownerId).forUpdate().execute();
}

/** A project with its owner's plan and verification, by key hash or id (the project cache's load). */
/**
 * What a ProjectRecord is built from (cache.ts), of `projects as p` joined to its owner
 * `operators as o`: shared with the statements that read a project together with something
 * else (storage's public serving reads the file and its project in one).
 */
export const PROJECT_WITH_OWNER = ['p.id', 'p.owner_id', 'p.name', 'p.site_url', 'p.settings', 'p.secrets', 'p.jwt_secret', 'o.plan', 'o.email as owner_email', 'o.is_verified'] as const;

export function findProjectWithOwner(db: Kysely<Database>, column: 'secret_key_hash' | 'publishable_key_hash' | 'id', value: string) {
  return db
    .selectFrom('projects as p')
    .innerJoin('operators as o', 'o.id', 'p.owner_id')
    .select(PROJECT_WITH_OWNER)
    .where(`p.${column}`, '=', value)
    .executeTakeFirst();
}

export type ProjectWithOwnerRow = NonNullable<Awaited<ReturnType<typeof findProjectWithOwner>>>;

/**
 * Sets (or, with null, removes) one encrypted entry of projects.secrets: a jsonb merge, not a
 * read-modify-write, so concurrent changes to the project's other secrets are kept.
 */
export function setProjectSecret(db: Kysely<Database>, projectId: string, name: string, sealed: Encrypted | null, now: Date) {
  const secrets = sealed === null ? sql`secrets - ${name}::text` : sql`secrets || jsonb_build_object(${name}::text, ${JSON.stringify(sealed)}::jsonb)`;
  return db
    .updateTable('projects')
    .set({ secrets: secrets as never, updated_at: now as never })
    .where('id', '=', projectId)
    .execute();
}

/** The most recently created project's sealed JWT secret: the start-up key check (key-check.ts). */
export function newestProjectSecret(db: Kysely<Database>) {
  return db.selectFrom('projects').select(['id', 'jwt_secret']).orderBy('created_at', 'desc').limit(1).executeTakeFirst();
}
