/**
 * A member's role in a project (docs/teams.md) and what the console shows of it: a control the
 * role may not use is hidden or disabled, with the reason in words. The server decides
 * (403 project_role_forbidden); this only spares the operator a refusal.
 */
import type { Role } from './types.js';

export type { Role };
const ORDER: Role[] = ['viewer', 'developer', 'admin', 'owner'];

/** Whether `role` has at least the rights of `least` (an unknown role: the server will say). */
export const can = (role: Role | undefined, least: Role): boolean => role === undefined || ORDER.indexOf(role) >= ORDER.indexOf(least);

/** Why a control is off for this role, or undefined when the role may use it. */
export const needs = (role: Role | undefined, least: Role): string | undefined =>
  can(role, least) ? undefined : `Needs the ${least} role${least === 'owner' ? '' : ' or higher'}; your role is ${role}.`;
