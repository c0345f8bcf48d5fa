/** SQL of the health probes. */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../database.js';

/** The cheapest round trip that proves the database answers. */
export async function selectOne(db: Kysely<Database>): Promise<void> {
  await sql`SELECT 1`.execute(db);
}
