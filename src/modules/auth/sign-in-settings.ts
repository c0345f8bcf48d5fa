/**
 * The project settings of the ways in (PATCH /api/projects/:id, shown as `signIn`): whether new
 * accounts may be created (`allowSignup`, default true), whether guests may sign in
 * (`allowAnonymous`, default false), and which URLs a mailed sign-in link may open (the site
 * URL and `redirectUrls`).
 */
import type { ProjectRecord } from '../projects/cache.js';

export const signupAllowed = (project: ProjectRecord): boolean => project.settings.allowSignup !== false;

export const anonymousAllowed = (project: ProjectRecord): boolean => project.settings.allowAnonymous === true;

/** The URLs a sign-in link may open: the site URL first, then the configured redirect URLs. */
export function redirectTargets(project: ProjectRecord): string[] {
  const extra = Array.isArray(project.settings.redirectUrls) ? (project.settings.redirectUrls as unknown[]).filter((u): u is string => typeof u === 'string') : [];
  return project.siteUrl ? [project.siteUrl, ...extra] : extra;
}
