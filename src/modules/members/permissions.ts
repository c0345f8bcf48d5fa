/**
 * Who may call each dashboard route (docs/teams.md, the matrix): one table, `METHOD path` →
 * declaration, stamped onto the route's `config.permission` when it is registered
 * (src/route-groups.ts; HEAD takes its GET's). The guard (guard.ts) enforces it on every
 * request of the operator groups; test/architecture/permission-declarations.test.ts fails for a
 * dashboard route without a declaration, for a project route with `noProject`, and for a
 * declaration that names no route.
 *
 * The roles: viewer reads (data, schemas, logs, usage, audit) but nothing that carries a secret
 * or a user's one-time code; developer also changes schemas, rules, data, end users, webhooks,
 * functions and mail templates; admin also keys, sign-in and provider settings, secrets,
 * members, backups; owner also deletes and transfers the project.
 */
import { needs, noProject, type PermissionDeclaration } from './declare.js';

const P = '/api/projects/:projectId';
const DATA = `${P}/data/:collectionName`;

const VIEWER = needs('viewer');
const DEVELOPER = needs('developer');
const ADMIN = needs('admin');
const OWNER = needs('owner');

const SIGN_IN = noProject('signs an operator up or in (or out): no project yet');
const OWN_ACCOUNT = noProject("the operator's own account, which belongs to no project");
const PLATFORM_ADMIN = noProject('platform administration (the ADMIN_EMAIL account), not a project');

export const PERMISSIONS: Record<string, PermissionDeclaration> = {
  // Signing up and in.
  'POST /api/auth/register': SIGN_IN,
  'POST /api/auth/login': SIGN_IN,
  'POST /api/auth/refresh-token': SIGN_IN,
  'POST /api/auth/logout': SIGN_IN,
  'GET /api/auth/csrf-token': SIGN_IN,
  'POST /api/auth/forgot-password': SIGN_IN,
  'POST /api/auth/reset-password': SIGN_IN,
  'POST /api/auth/send-otp': SIGN_IN,
  'POST /api/auth/verify-otp': SIGN_IN,
  'POST /api/auth/mfa/verify': SIGN_IN,
  'POST /api/auth/passkeys/signin/options': SIGN_IN,
  'POST /api/auth/passkeys/signin': SIGN_IN,
  'POST /api/auth/mfa/passkey/options': SIGN_IN,
  'GET /api/auth/github': SIGN_IN,
  'GET /api/auth/github/start': SIGN_IN,
  'GET /api/auth/github/callback': SIGN_IN,
  'POST /api/invitations/lookup': noProject('reads an invitation by its token (the token is the credential)'),
  'POST /api/invitations/accept': noProject('the invitation names the project; the guard is its token and the signed-in address'),

  // The operator's own account.
  'GET /api/auth/me': OWN_ACCOUNT,
  'DELETE /api/auth/me': OWN_ACCOUNT,
  'PUT /api/auth/change-password': OWN_ACCOUNT,
  'GET /api/auth/sessions': OWN_ACCOUNT,
  'POST /api/auth/sessions/revoke-others': OWN_ACCOUNT,
  'DELETE /api/auth/sessions/:sessionId': OWN_ACCOUNT,
  'GET /api/auth/identities': OWN_ACCOUNT,
  'DELETE /api/auth/identities/:provider': OWN_ACCOUNT,
  'POST /api/auth/github/link': OWN_ACCOUNT,
  'GET /api/auth/mfa/factors': OWN_ACCOUNT,
  'POST /api/auth/mfa/totp/enroll': OWN_ACCOUNT,
  'POST /api/auth/mfa/totp/confirm': OWN_ACCOUNT,
  'DELETE /api/auth/mfa/totp': OWN_ACCOUNT,
  'POST /api/auth/mfa/recovery-codes': OWN_ACCOUNT,
  'POST /api/auth/mfa/passkeys/register/options': OWN_ACCOUNT,
  'POST /api/auth/mfa/passkeys/register': OWN_ACCOUNT,
  'GET /api/auth/mfa/passkeys': OWN_ACCOUNT,
  'PATCH /api/auth/mfa/passkeys/:id': OWN_ACCOUNT,
  'DELETE /api/auth/mfa/passkeys/:id': OWN_ACCOUNT,
  'PUT /api/user/me/byok': OWN_ACCOUNT,
  'GET /api/projects': noProject('lists the projects the operator is a member of, with the role in each'),
  'POST /api/projects': noProject('creates a project, whose owner the operator becomes'),

  // Platform administration.
  'GET /api/admin/operators': PLATFORM_ADMIN,
  'GET /api/admin/plans': PLATFORM_ADMIN,
  'PATCH /api/admin/operators/:id/plan': PLATFORM_ADMIN,
  'PUT /api/admin/settings/operator-mfa': PLATFORM_ADMIN,
  'GET /api/admin/database/migrations': PLATFORM_ADMIN,

  // The project, its settings and keys.
  [`GET ${P}`]: VIEWER,
  [`PATCH ${P}`]: ADMIN,
  [`DELETE ${P}`]: OWNER,
  [`GET ${P}/usage`]: VIEWER,
  [`GET ${P}/usage/history`]: VIEWER,
  [`GET ${P}/usage/alerts`]: VIEWER,
  [`PUT ${P}/usage/alerts`]: ADMIN,
  [`POST ${P}/api-key`]: ADMIN,
  [`PUT ${P}/byok`]: ADMIN,
  [`POST ${P}/ai/query-builder`]: DEVELOPER,
  [`POST ${P}/ai/schema-suggest`]: DEVELOPER,

  // Members (docs/teams.md).
  [`GET ${P}/members`]: VIEWER,
  [`PATCH ${P}/members/:operatorId`]: ADMIN,
  [`DELETE ${P}/members/:operatorId`]: ADMIN,
  [`POST ${P}/members/leave`]: VIEWER,
  [`GET ${P}/members/invitations`]: ADMIN,
  [`POST ${P}/members/invitations`]: ADMIN,
  [`DELETE ${P}/members/invitations/:invitationId`]: ADMIN,
  [`GET ${P}/transfer`]: VIEWER,
  [`POST ${P}/transfer`]: OWNER,
  [`DELETE ${P}/transfer`]: VIEWER,
  [`POST ${P}/transfer/accept`]: ADMIN,

  // Storage.
  [`GET ${P}/files`]: VIEWER,
  [`DELETE ${P}/files`]: DEVELOPER,
  [`PATCH ${P}/files`]: DEVELOPER,
  [`GET ${P}/storage`]: VIEWER,
  [`PATCH ${P}/storage`]: ADMIN,
  [`PUT ${P}/files/settings`]: DEVELOPER,
  [`POST ${P}/files/upload-request`]: DEVELOPER,
  [`POST ${P}/files/upload-confirm`]: DEVELOPER,
  [`POST ${P}/files/download-url`]: VIEWER,

  // End users.
  [`GET ${P}/users`]: VIEWER,
  [`POST ${P}/users`]: DEVELOPER,
  [`GET ${P}/users/:userId`]: VIEWER,
  [`PATCH ${P}/users/:userId`]: DEVELOPER,
  [`DELETE ${P}/users/:userId`]: DEVELOPER,
  [`GET ${P}/users/:userId/sessions`]: VIEWER,
  [`DELETE ${P}/users/:userId/sessions`]: DEVELOPER,
  [`DELETE ${P}/users/:userId/sessions/:sessionId`]: DEVELOPER,
  [`POST ${P}/users/:userId/verify`]: DEVELOPER,
  [`POST ${P}/users/:userId/disable`]: DEVELOPER,
  [`POST ${P}/users/:userId/enable`]: DEVELOPER,
  [`GET ${P}/users/:userId/factors`]: VIEWER,
  // Taking a user's second factors away lets anyone with the password in: an admin's call.
  [`DELETE ${P}/users/:userId/factors`]: ADMIN,

  // Sign-in settings (they carry provider secrets).
  [`PATCH ${P}/auth/providers`]: ADMIN,
  [`GET ${P}/auth/oidc`]: VIEWER,
  [`PUT ${P}/auth/oidc/:providerId`]: ADMIN,
  [`DELETE ${P}/auth/oidc/:providerId`]: ADMIN,

  // Backups: the export carries users' password hashes and the project's sealed secrets.
  [`GET ${P}/export`]: ADMIN,
  [`POST ${P}/import`]: ADMIN,
  // Scheduled backups: anyone on the team sees them and their progress; only admins change the
  // schedule, run, download (the same content as the export), restore or delete one.
  [`GET ${P}/backups/schedule`]: VIEWER,
  [`PUT ${P}/backups/schedule`]: ADMIN,
  [`GET ${P}/backups`]: VIEWER,
  [`POST ${P}/backups`]: ADMIN,
  [`GET ${P}/backups/:backupId`]: VIEWER,
  [`GET ${P}/backups/:backupId/download`]: ADMIN,
  [`POST ${P}/backups/:backupId/restore`]: ADMIN,
  [`DELETE ${P}/backups/:backupId`]: ADMIN,
  [`GET ${P}/operations`]: VIEWER,
  [`GET ${P}/operations/:operationId`]: VIEWER,

  // Mail.
  [`GET ${P}/mail/logs`]: VIEWER,
  [`GET ${P}/mail/logs/:providerId/live`]: VIEWER,
  [`PUT ${P}/mail/webhook-secret`]: ADMIN,
  // The outbox holds whole messages: end users' one-time codes and sign-in links.
  [`GET ${P}/mail/outbox`]: DEVELOPER,
  [`GET ${P}/mail/templates`]: VIEWER,
  [`POST ${P}/mail/templates`]: DEVELOPER,
  [`GET ${P}/mail/templates/global`]: VIEWER,
  [`GET ${P}/mail/templates/:templateId`]: VIEWER,
  [`PATCH ${P}/mail/templates/:templateId`]: DEVELOPER,
  [`DELETE ${P}/mail/templates/:templateId`]: DEVELOPER,
  [`GET ${P}/mail/auth-templates`]: VIEWER,
  [`PUT ${P}/mail/auth-templates/:kind/:locale`]: DEVELOPER,
  [`DELETE ${P}/mail/auth-templates/:kind/:locale`]: DEVELOPER,
  [`PUT ${P}/mail/auth-templates/default-locale`]: DEVELOPER,
  [`POST ${P}/mail/auth-templates/preview`]: DEVELOPER,
  [`POST ${P}/mail/templates/preview`]: DEVELOPER,
  [`GET ${P}/mail/audiences`]: VIEWER,
  [`POST ${P}/mail/audiences`]: DEVELOPER,
  [`DELETE ${P}/mail/audiences/:audienceId`]: DEVELOPER,
  [`GET ${P}/mail/audiences/:audienceId/contacts`]: VIEWER,
  [`POST ${P}/mail/audiences/:audienceId/contacts`]: DEVELOPER,
  [`DELETE ${P}/mail/audiences/:audienceId/contacts/:contactId`]: DEVELOPER,
  [`GET ${P}/mail/broadcasts`]: VIEWER,
  [`POST ${P}/mail/broadcasts`]: DEVELOPER,
  [`POST ${P}/mail/broadcasts/:id/send`]: DEVELOPER,
  [`DELETE ${P}/mail/broadcasts/:id`]: DEVELOPER,

  // Schemas, access settings and rules.
  [`POST ${P}/collections`]: DEVELOPER,
  [`GET ${P}/collections`]: VIEWER,
  [`GET ${P}/collections/:name`]: VIEWER,
  [`PATCH ${P}/collections/:name`]: DEVELOPER,
  [`DELETE ${P}/collections/:name`]: DEVELOPER,
  [`PATCH ${P}/collections/:name/rls`]: DEVELOPER,
  [`PATCH ${P}/collections/:name/realtime`]: DEVELOPER,
  [`GET ${P}/collections/:name/rules`]: VIEWER,
  [`PATCH ${P}/collections/:name/rules`]: DEVELOPER,
  [`POST ${P}/collections/:name/rules/preview`]: DEVELOPER,

  // Data.
  [`POST ${P}/data/batch`]: DEVELOPER,
  [`GET ${DATA}/export/:format`]: VIEWER,
  [`POST ${DATA}/import`]: DEVELOPER,
  [`GET ${DATA}`]: VIEWER,
  [`POST ${DATA}`]: DEVELOPER,
  [`GET ${DATA}/:id`]: VIEWER,
  [`PUT ${DATA}/:id`]: DEVELOPER,
  [`PATCH ${DATA}/:id`]: DEVELOPER,
  [`DELETE ${DATA}/:id`]: DEVELOPER,
  [`GET ${DATA}/aggregate`]: VIEWER,
  [`POST ${DATA}/bulk`]: DEVELOPER,
  [`POST ${DATA}/:id/restore`]: DEVELOPER,
  [`POST ${DATA}/bulk-delete`]: DEVELOPER,
  [`POST ${DATA}/bulk-restore`]: DEVELOPER,
  // The console's live records (a ticket that reads as the secret key would).
  [`POST ${P}/realtime/ticket`]: VIEWER,

  // Webhooks.
  [`POST ${P}/webhooks`]: DEVELOPER,
  [`GET ${P}/webhooks`]: VIEWER,
  [`GET ${P}/webhooks/:endpointId`]: VIEWER,
  [`PATCH ${P}/webhooks/:endpointId`]: DEVELOPER,
  [`DELETE ${P}/webhooks/:endpointId`]: DEVELOPER,
  [`GET ${P}/webhooks/:endpointId/deliveries`]: VIEWER,
  [`POST ${P}/webhooks/:endpointId/test`]: DEVELOPER,
  [`POST ${P}/webhooks/:endpointId/deliveries/:deliveryId/redeliver`]: DEVELOPER,

  // Logs, functions, database insight, audit.
  [`GET ${P}/logs/requests`]: VIEWER,
  [`GET ${P}/logs/requests/routes`]: VIEWER,
  [`POST ${P}/functions`]: DEVELOPER,
  [`GET ${P}/functions`]: VIEWER,
  [`GET ${P}/functions-stats`]: VIEWER,
  [`GET ${P}/functions/:name`]: VIEWER,
  [`PATCH ${P}/functions/:name`]: DEVELOPER,
  [`DELETE ${P}/functions/:name`]: DEVELOPER,
  [`POST ${P}/functions/:name/rollback`]: DEVELOPER,
  [`GET ${P}/functions/:name/versions/:version`]: VIEWER,
  [`GET ${P}/functions/:name/invocations`]: VIEWER,
  [`POST ${P}/functions/:name/run`]: DEVELOPER,
  // Names only; values are write-only, and setting one is an admin's (like keys).
  [`GET ${P}/function-secrets`]: VIEWER,
  [`PUT ${P}/function-secrets/:name`]: ADMIN,
  [`DELETE ${P}/function-secrets/:name`]: ADMIN,
  [`GET ${P}/database/policies`]: VIEWER,
  [`GET ${P}/database/indexes`]: VIEWER,
  [`GET ${P}/database/tables`]: VIEWER,
  [`GET ${P}/database/statements`]: VIEWER,
  [`GET ${P}/audit`]: VIEWER,
  [`GET ${P}/audit/export`]: VIEWER,
  [`GET ${P}/audit/verify`]: VIEWER,
};

/** The declaration of one route (`METHOD url` as registered; HEAD as its GET), if the table has one. */
export const permissionOf = (method: string, url: string): PermissionDeclaration | undefined => {
  const m = method.toUpperCase();
  return PERMISSIONS[`${m === 'HEAD' ? 'GET' : m} ${url}`];
};
