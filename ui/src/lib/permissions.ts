/**
 * The least role of each dashboard route, as the server enforces it: the console imports the
 * server's own table (src/modules/members/permissions.ts), bundled in, so the two cannot
 * drift. A control names the route it calls (`gate(role, 'POST /api/projects/:projectId/functions')`)
 * and is hidden or disabled with the reason when the role is too low.
 * test/ui/permissions.test.ts checks that every route the console names is in the table.
 */
import { PERMISSIONS } from '../../../src/modules/members/permissions.js';
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { needs, type Role } from './roles.js';

/** The least role a project route needs (`METHOD /api/projects/:projectId/…`, as declared). */
export function leastRole(route: string): Role {
  const d = PERMISSIONS[route];
  if (!d || !('role' in d)) throw new Error(`no project permission declared for ${route}`);
  return d.role;
}

/** Why `role` may not call `route` ("Needs the developer role or higher; your role is viewer."), or undefined when it may. */
export const gate = (role: Role | undefined, route: string): string | undefined => needs(role, leastRole(route));

/** Whether `role` may call `route` (an unknown role: the server will say). */
export const allowed = (role: Role | undefined, route: string): boolean => gate(role, route) === undefined;

/** The operator's role in the project on screen (set by the project shell). */
export const ProjectRole = createContext<Role | undefined>(undefined);

/** Why the operator's role on this project may not call `route`, or undefined when it may. */
export const useGate = (route: string): string | undefined => gate(useContext(ProjectRole), route);
