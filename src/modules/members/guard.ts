/**
 * The one guard of the dashboard's project routes (docs/teams.md): runs after the operator's
 * authentication (src/route-groups.ts) on every request, reads the route's declared permission
 * (`config.permission`, from permissions.ts) and the operator's role in the project from the
 * database, uncached, so a removed member or a lowered role counts from the next request, on
 * every node. A project the operator is no member of is 404 (ids of others are not
 * confirmed); too low a role is 403 `project_role_forbidden`, naming the role needed.
 */
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { Errors } from '../../lib/errors.js';
import { isObjectId } from '../../lib/ids.js';
import { operatorOf } from '../operators/auth.js';
import { ProjectErrors } from '../projects/errors.js';
import { isProjectPermission } from './declare.js';
import { MemberErrors } from './errors.js';
import { roleOf } from './queries.js';
import { atLeast, type Role } from './roles.js';

export function forbidden(needed: Role, role: Role) {
  return MemberErrors.project_role_forbidden(`This needs the ${needed} role${needed === 'owner' ? '' : ' or higher'} in this project; your role is ${role}.`, { requiredRole: needed, role });
}

export function projectRoleGuard(ctx: AppContext) {
  return async function requireProjectRole(req: FastifyRequest): Promise<void> {
    const declared = req.routeOptions.config?.permission;
    if (!isProjectPermission(declared)) return;
    const projectId = (req.params as { projectId?: unknown } | undefined)?.projectId;
    if (typeof projectId !== 'string' || !isObjectId(projectId)) throw Errors.invalid_id('Invalid project id.');
    const role = await roleOf(ctx.db.admin, projectId, operatorOf(req).id);
    if (!role) throw ProjectErrors.project_not_found();
    if (!atLeast(role, declared.role)) throw forbidden(declared.role, role);
    req.projectRole = role;
  };
}
