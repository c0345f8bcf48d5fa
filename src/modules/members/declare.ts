/**
 * How a dashboard route declares who may call it (docs/teams.md): the least role a member of
 * the route's project needs (`needs('developer')`), or, for a route about no project (the
 * operator's own account, signing in, the projects list, platform administration),
 * `noProject('why')`. The table lives in permissions.ts; the guard (guard.ts) enforces it;
 * test/architecture/permission-declarations.test.ts fails for a dashboard route without one.
 * Imports nothing but types: every module may import it, and so does the console
 * (ui/src/lib/permissions.ts bundles the table); Fastify's `config.permission` and
 * `req.projectRole` are declared in fastify-config.ts.
 */
import type { Role } from './roles.js';

export interface ProjectPermission {
  /** The least role a member needs. */
  role: Role;
}

export interface NoProject {
  /** Why the route needs no project role. */
  none: string;
}

export type PermissionDeclaration = ProjectPermission | NoProject;

export const needs = (role: Role): ProjectPermission => ({ role });
export const noProject = (reason: string): NoProject => ({ none: reason });
export const isProjectPermission = (d: PermissionDeclaration | undefined): d is ProjectPermission => d !== undefined && 'role' in d;
