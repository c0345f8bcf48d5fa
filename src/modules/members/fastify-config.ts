/**
 * Fastify's route config and request as the members module extends them: a route's declared
 * permission (declare.ts) and the role the guard found (guard.ts). Apart from declare.ts, so the
 * console can bundle the permission table without Fastify's types.
 */
import type { PermissionDeclaration } from './declare.js';
import type { Role } from './roles.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call this dashboard route (src/modules/members/declare.ts). */
    permission?: PermissionDeclaration;
  }
  interface FastifyRequest {
    /** The signed-in operator's role in the route's project, once the guard has checked it. */
    projectRole?: Role;
  }
}
