/**
 * Dashboard access to a project: the id must be an ObjectId (400) and the project must exist
 * and belong to the signed-in operator (404 otherwise, so ids of others are not confirmed).
 */
import type { AppContext } from '../../context.js';
import { Errors } from '../../lib/errors.js';
import { isObjectId } from '../../lib/ids.js';
import type { OperatorIdentity } from '../operators/auth.js';
import { ProjectErrors } from './errors.js';
import { findOwnedProject } from './queries.js';

export async function loadOwnedProject(ctx: AppContext, operator: OperatorIdentity, projectId: string) {
  if (!isObjectId(projectId)) throw Errors.invalid_id('Invalid project id.');
  const row = await findOwnedProject(ctx.db.admin, projectId, operator.id);
  if (!row) throw ProjectErrors.project_not_found();
  return row;
}
