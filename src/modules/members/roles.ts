/**
 * The four roles of a project's members, lowest first (docs/teams.md). A role includes every
 * right of the roles below it. Imports nothing: every module may import it.
 */
export const ROLES = ['viewer', 'developer', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

export const rankOf = (role: Role): number => ROLES.indexOf(role);

/** Whether `role` has at least the rights of `needed`. */
export const atLeast = (role: Role, needed: Role): boolean => rankOf(role) >= rankOf(needed);

export const isRole = (v: unknown): v is Role => typeof v === 'string' && (ROLES as readonly string[]).includes(v);
