/** Teams test helpers: members of each role on one project, the dev outbox's invitation links. */
import type { TestEnv } from '../../helpers/context.js';
import { makeOperator, type TestOperator } from '../../helpers/fixtures.js';
import { drainJobs } from '../../helpers/jobs.js';
import { insertMember } from '../../../src/modules/members/queries.js';
import type { Role } from '../../../src/modules/members/roles.js';

/** A member with this role, added as the owner would (a fixture row; invitations are tested on their own). */
export async function addMember(env: TestEnv, projectId: string, role: Exclude<Role, 'owner'>, addedBy: string, op?: TestOperator): Promise<TestOperator> {
  const operator = op ?? (await makeOperator(env.ctx));
  await insertMember(env.ctx.db.admin, { projectId, operatorId: operator.id, role, addedBy });
  return operator;
}

/** The newest invitation link mailed to `to`, read from the dev outbox (after the mail jobs ran). */
export async function invitationToken(env: TestEnv, to: string): Promise<string> {
  await drainJobs(env);
  const rows = await env.ctx.db.admin.selectFrom('mail_outbox').select(['to', 'subject', 'text', 'created_at']).orderBy('created_at', 'desc').execute();
  const mail = rows.find((r) => JSON.stringify(r.to).includes(to) && /invited/.test(r.subject));
  const m = /#\/invitations\/([A-Za-z0-9_-]+)/.exec(mail?.text ?? '');
  if (!m) throw new Error(`no invitation link mailed to ${to}`);
  return m[1]!;
}
