/** SQL of the admin domain: operators with their project counts, plan changes. */
import type { Kysely } from 'kysely';
import type { Database } from '../../database.js';
import type { PlanName } from '../plans/plans.js';

type Db = Kysely<Database>;

export function listOperatorsWithCounts(db: Db) {
  return db
    .selectFrom('operators as o')
    .leftJoin('projects as p', 'p.owner_id', 'o.id')
    .select(['o.id', 'o.email', 'o.name', 'o.plan', 'o.is_verified', 'o.created_at', 'o.updated_at'])
    .select((eb) => eb.fn.count<number>('p.id').as('projects_count'))
    .groupBy('o.id')
    .orderBy('o.created_at')
    .orderBy('o.id')
    .execute();
}

/** Sets the plan; returns the operator's project ids (undefined when the operator is unknown). */
export async function setPlan(db: Db, operatorId: string, plan: PlanName, now: Date): Promise<string[] | undefined> {
  return db.transaction().execute(async (tx) => {
    const row = await tx
      .updateTable('operators')
      .set({ plan, updated_at: now })
      .where('id', '=', operatorId)
      .returning('id')
      .executeTakeFirst();
    if (!row) return undefined;
    const projects = await tx.selectFrom('projects').select('id').where('owner_id', '=', operatorId).execute();
    return projects.map((p) => p.id);
  });
}
