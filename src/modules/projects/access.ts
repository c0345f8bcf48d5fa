/**
 * Dashboard access to a project: the id must be an ObjectId (400) and the signed-in operator
 * must be one of its members (404 otherwise, so ids of others are not confirmed). What the
 * member's role allows is checked before, by the route's declared permission
 * (src/modules/members/guard.ts).
 */
import type { AppContext } from '../../context.js';
import { Errors } from '../../lib/errors.js';
import { isObjectId } from '../../lib/ids.js';
import type { OperatorIdentity } from '../operators/auth.js';
import { ProjectErrors } from './errors.js';
import { findMemberProject } from './queries.js';

export async function loadMemberProject(ctx: AppContext, operator: OperatorIdentity, projectId: string) {
  if (!isObjectId(projectId)) throw Errors.invalid_id('Invalid project id.');
  const row = await findMemberProject(ctx.db.admin, projectId, operator.id);
  if (!row) throw ProjectErrors.project_not_found();
  return row;
}
