/** SQL of the projects domain. */
import type { Kysely } from 'kysely';
import type { Database } from '../../db/types.js';
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
