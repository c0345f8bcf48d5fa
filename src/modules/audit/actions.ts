/**
 * What the audit log records of each dashboard route (docs/audit.md "What is recorded"): one
 * table, `METHOD path` → declaration, stamped onto the route's `config.audit` when it is
 * registered (a declaration in the route's own options wins). Mutating routes of the
 * operator groups must each have one (test/architecture/audit-declarations.test.ts): an action,
 * or `notAudited` with the reason. GET routes listed here are audited too (exports).
 *
 * Snapshots read the changed setting through the domains' own services (before the handler,
 * and again after it succeeded); the entry keeps the members that differ, secrets masked.
 */
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { operatorOf } from '../operators/auth.js';
import { getProject } from '../projects/service.js';
import { getCollection } from '../collections/service.js';
import { getFunction } from '../functions/service.js';
import { getEndpoint } from '../webhooks/service.js';
import { getTemplate } from '../mail/templates.js';
import { listProjectMembers } from '../members/service.js';
import { getSchedule } from '../backup/schedule.js';
import { getBackup } from '../backup/restore-service.js';
import { alertSettingsOf } from '../usage/alerts.js';
import { audited, byBody, byParams, notAudited, queryFlags, type AuditDeclaration } from './declare.js';

const param = (req: FastifyRequest, name: string) => String((req.params as Record<string, unknown>)[name] ?? '');

/** The project's settings as GET /api/projects/:projectId shows them, without usage and collections. */
async function projectSettings(ctx: AppContext, projectId: string, req: FastifyRequest) {
  const view = (await getProject(ctx, operatorOf(req), projectId)) as Record<string, unknown>;
  const drop = ['collections', 'collectionsCount', 'metrics', 'databaseUsed', 'databaseLimit', 'storageUsed', 'storageLimit', 'createdAt', 'updatedAt'];
  return Object.fromEntries(Object.entries(view).filter(([k]) => !drop.includes(k)));
}

const authProviders = async (ctx: AppContext, projectId: string, req: FastifyRequest) => {
  const s = await projectSettings(ctx, projectId, req);
  return { authProviders: s.authProviders ?? null };
};

async function collection(ctx: AppContext, projectId: string, req: FastifyRequest) {
  const c = await getCollection(ctx, projectId, param(req, 'name'));
  return { name: c.name, fields: c.fields, indexes: c.indexes, searchLanguage: c.search_language, rls: c.rls, realtime: c.realtime, rules: c.rules };
}

async function fn(ctx: AppContext, projectId: string, req: FastifyRequest) {
  const name = param(req, 'name') || String((req.body as { name?: unknown } | undefined)?.name ?? '');
  const f = await getFunction(ctx, projectId, name);
  return { name: f.name, kind: f.kind, trigger: f.trigger, enabled: f.enabled, version: f.version, language: f.language, sourceSha256: f.hash };
}

async function webhook(ctx: AppContext, projectId: string, req: FastifyRequest) {
  const e = (await getEndpoint(ctx, projectId, param(req, 'endpointId'))) as Record<string, unknown>;
  const { updatedAt: _u, failingSince: _f, ...rest } = e;
  return rest;
}

async function template(ctx: AppContext, projectId: string, req: FastifyRequest) {
  const t = (await getTemplate(ctx, projectId, param(req, 'templateId'))) as Record<string, unknown>;
  const { updatedAt: _u, ...rest } = t;
  return rest;
}

/** A member's email and role, as the members list shows them (null once removed). */
async function memberRole(ctx: AppContext, projectId: string, req: FastifyRequest) {
  const m = (await listProjectMembers(ctx, projectId)).find((x) => x.operatorId === param(req, 'operatorId'));
  return m ? { email: m.email, role: m.role } : null;
}

/** The backup schedule as GET …/backups/schedule shows it. */
async function backupSchedule(ctx: AppContext, projectId: string, req: FastifyRequest) {
  return getSchedule(ctx, { id: projectId }, operatorOf(req).plan);
}

/** The backup as the list shows it (what was deleted: its date, size and counts). */
async function backup(ctx: AppContext, projectId: string, req: FastifyRequest) {
  const { id, trigger, status, size, counts, storage, createdAt } = await getBackup(ctx, projectId, param(req, 'backupId'));
  return { id, trigger, status, size, counts, storage, createdAt };
}

const OWN_ACCOUNT = notAudited("the operator's own account (sign-in factors, password), not a project");
const PREVIEW = notAudited('a preview: renders or evaluates, stores and sends nothing');
const ADMIN = notAudited('platform administration, not a project');

const P = '/api/projects/:projectId';
const DATA = `${P}/data/:collectionName`;

const SIGN_IN = notAudited('an operator signs up or in (or out): no project is changed');

export const AUDIT_DECLARATIONS: Record<string, AuditDeclaration> = {
  // Teams (docs/teams.md).
  [`POST ${P}/members/invitations`]: audited('members.invite', { target: byBody('email'), body: true }),
  [`DELETE ${P}/members/invitations/:invitationId`]: audited('members.revoke_invitation', { target: byParams('invitationId') }),
  [`PATCH ${P}/members/:operatorId`]: audited('members.role_change', { target: byParams('operatorId'), snapshot: memberRole }),
  [`DELETE ${P}/members/:operatorId`]: audited('members.remove', { target: byParams('operatorId'), snapshot: memberRole }),
  [`POST ${P}/members/leave`]: audited('members.leave'),
  [`POST ${P}/transfer`]: audited('project.transfer_offer', { target: byBody('operatorId') }),
  [`DELETE ${P}/transfer`]: audited('project.transfer_cancel'),
  [`POST ${P}/transfer/accept`]: audited('project.transfer_accept'),
  'POST /api/invitations/accept': audited('members.join', { projectFromResponse: true }),
  'POST /api/invitations/lookup': notAudited('reads what an invitation link invites to; changes nothing'),
  // Written by the service in each project the operator was a member of (no :projectId here).
  'DELETE /api/auth/me': audited('operator.delete'),

  // Operators' sign-up and sign-in (the public group of the dashboard).
  'POST /api/auth/register': SIGN_IN,
  'POST /api/auth/login': SIGN_IN,
  'POST /api/auth/refresh-token': SIGN_IN,
  'POST /api/auth/logout': SIGN_IN,
  'POST /api/auth/forgot-password': SIGN_IN,
  'POST /api/auth/reset-password': SIGN_IN,
  'POST /api/auth/send-otp': SIGN_IN,
  'POST /api/auth/verify-otp': SIGN_IN,
  'POST /api/auth/mfa/verify': SIGN_IN,
  'POST /api/auth/mfa/passkey/options': SIGN_IN,
  'POST /api/auth/passkeys/signin/options': SIGN_IN,
  'POST /api/auth/passkeys/signin': SIGN_IN,

  // The operator's own account.
  'PUT /api/auth/change-password': OWN_ACCOUNT,
  'POST /api/auth/sessions/revoke-others': OWN_ACCOUNT,
  'DELETE /api/auth/sessions/:sessionId': OWN_ACCOUNT,
  'DELETE /api/auth/identities/:provider': OWN_ACCOUNT,
  'POST /api/auth/github/link': OWN_ACCOUNT,
  'POST /api/auth/mfa/totp/enroll': OWN_ACCOUNT,
  'POST /api/auth/mfa/totp/confirm': OWN_ACCOUNT,
  'DELETE /api/auth/mfa/totp': OWN_ACCOUNT,
  'POST /api/auth/mfa/recovery-codes': OWN_ACCOUNT,
  'POST /api/auth/mfa/passkeys/register/options': OWN_ACCOUNT,
  'POST /api/auth/mfa/passkeys/register': OWN_ACCOUNT,
  'PATCH /api/auth/mfa/passkeys/:id': OWN_ACCOUNT,
  'DELETE /api/auth/mfa/passkeys/:id': OWN_ACCOUNT,
  'PUT /api/user/me/byok': notAudited("the operator's personal AI key, which belongs to no project (its value is never logged anywhere)"),
  'PATCH /api/admin/operators/:id/plan': ADMIN,
  'PUT /api/admin/settings/operator-mfa': ADMIN,

  // Projects, settings and keys.
  'POST /api/projects': audited('project.create', { projectFromResponse: true, body: true }),
  [`PATCH ${P}`]: audited('settings.update', { snapshot: projectSettings }),
  [`DELETE ${P}`]: audited('project.delete', { snapshot: projectSettings }),
  [`POST ${P}/api-key`]: audited('keys.rotate', { target: byBody('keyType') }),
  [`PUT ${P}/byok`]: audited('ai.key_set', { body: true }),
  [`POST ${P}/ai/query-builder`]: notAudited('asks the AI for a query; changes nothing'),
  [`POST ${P}/ai/schema-suggest`]: notAudited('asks the AI for a schema; changes nothing'),

  // Sign-in settings.
  [`PATCH ${P}/auth/providers`]: audited('auth.providers_update', { snapshot: authProviders }),
  [`PUT ${P}/auth/oidc/:providerId`]: audited('auth.oidc_set', { target: byParams('providerId'), body: true }),
  [`DELETE ${P}/auth/oidc/:providerId`]: audited('auth.oidc_delete', { target: byParams('providerId') }),

  // Storage.
  [`DELETE ${P}/files`]: audited('files.delete', { body: true }),
  [`PATCH ${P}/files`]: audited('files.update', { body: true }),
  [`PATCH ${P}/storage`]: audited('storage.update', { body: true }),
  [`PUT ${P}/files/settings`]: audited('files.settings_update', { body: true }),
  [`POST ${P}/files/upload-request`]: audited('files.upload', { body: true }),
  [`POST ${P}/files/upload-confirm`]: audited('files.upload_confirm', { body: true }),
  [`POST ${P}/files/download-url`]: notAudited('a signed download URL: reads a file, changes nothing'),

  // End users (user admin).
  [`POST ${P}/users`]: audited('users.create', { body: true }),
  [`PATCH ${P}/users/:userId`]: audited('users.update', { target: byParams('userId'), body: true }),
  [`DELETE ${P}/users/:userId`]: audited('users.delete', { target: byParams('userId') }),
  [`DELETE ${P}/users/:userId/sessions`]: audited('users.sessions_revoke', { target: byParams('userId') }),
  [`DELETE ${P}/users/:userId/sessions/:sessionId`]: audited('users.session_revoke', { target: byParams('userId', 'sessionId') }),
  [`POST ${P}/users/:userId/verify`]: audited('users.verify', { target: byParams('userId') }),
  [`POST ${P}/users/:userId/disable`]: audited('users.disable', { target: byParams('userId') }),
  [`POST ${P}/users/:userId/enable`]: audited('users.enable', { target: byParams('userId') }),
  [`DELETE ${P}/users/:userId/factors`]: audited('users.mfa_reset', { target: byParams('userId') }),

  // Backups.
  [`GET ${P}/export`]: audited('backup.export'),
  [`POST ${P}/import`]: audited('backup.import', { detail: queryFlags('dryRun', 'newIds', 'replace') }),
  [`PUT ${P}/backups/schedule`]: audited('backup.schedule_update', { snapshot: backupSchedule }),
  [`POST ${P}/backups`]: audited('backup.run'),
  [`GET ${P}/backups/:backupId/download`]: audited('backup.download', { target: byParams('backupId') }),
  [`POST ${P}/backups/:backupId/restore`]: audited('backup.restore', { target: byParams('backupId'), body: true }),
  [`DELETE ${P}/backups/:backupId`]: audited('backup.delete', { target: byParams('backupId'), snapshot: backup }),

  // Mail.
  [`PUT ${P}/mail/webhook-secret`]: audited('mail.webhook_secret_set', { body: true }),
  [`POST ${P}/mail/templates`]: audited('mail.template_create', { target: byBody('name'), body: true }),
  [`PATCH ${P}/mail/templates/:templateId`]: audited('mail.template_update', { target: byParams('templateId'), snapshot: template }),
  [`DELETE ${P}/mail/templates/:templateId`]: audited('mail.template_delete', { target: byParams('templateId'), snapshot: template }),
  [`PUT ${P}/mail/auth-templates/:kind/:locale`]: audited('mail.auth_template_set', { target: byParams('kind', 'locale'), body: true }),
  [`DELETE ${P}/mail/auth-templates/:kind/:locale`]: audited('mail.auth_template_delete', { target: byParams('kind', 'locale') }),
  [`PUT ${P}/mail/auth-templates/default-locale`]: audited('mail.default_locale_set', { body: true }),
  [`POST ${P}/mail/auth-templates/preview`]: PREVIEW,
  [`POST ${P}/mail/templates/preview`]: PREVIEW,
  [`POST ${P}/mail/audiences`]: audited('mail.audience_create', { body: true }),
  [`DELETE ${P}/mail/audiences/:audienceId`]: audited('mail.audience_delete', { target: byParams('audienceId') }),
  [`POST ${P}/mail/audiences/:audienceId/contacts`]: audited('mail.contact_add', { target: byParams('audienceId'), body: true }),
  [`DELETE ${P}/mail/audiences/:audienceId/contacts/:contactId`]: audited('mail.contact_delete', { target: byParams('audienceId', 'contactId') }),
  [`POST ${P}/mail/broadcasts`]: audited('mail.broadcast_create', { body: true }),
  [`POST ${P}/mail/broadcasts/:id/send`]: audited('mail.broadcast_send', { target: byParams('id'), body: true }),
  [`DELETE ${P}/mail/broadcasts/:id`]: audited('mail.broadcast_delete', { target: byParams('id') }),

  // Schemas, access settings and rules.
  [`POST ${P}/collections`]: audited('schema.create', { target: byBody('name'), body: true }),
  [`PATCH ${P}/collections/:name`]: audited('schema.update', { target: byParams('name'), snapshot: collection }),
  [`DELETE ${P}/collections/:name`]: audited('schema.delete', { target: byParams('name'), snapshot: collection }),
  [`PATCH ${P}/collections/:name/rls`]: audited('rls.update', { target: byParams('name'), snapshot: collection }),
  [`PATCH ${P}/collections/:name/realtime`]: audited('schema.realtime_update', { target: byParams('name'), snapshot: collection }),
  [`PATCH ${P}/collections/:name/rules`]: audited('rules.update', { target: byParams('name'), snapshot: collection }),
  [`POST ${P}/collections/:name/rules/preview`]: PREVIEW,

  // Data, as the operator changes it (the documents themselves are not copied into the log).
  [`POST ${P}/data/batch`]: audited('data.batch'),
  [`POST ${DATA}/import`]: audited('data.import', { target: byParams('collectionName'), detail: queryFlags('hooks') }),
  [`GET ${DATA}/export/:format`]: audited('data.export', { target: byParams('collectionName'), detail: (req) => ({ format: param(req, 'format'), query: req.query }) }),
  [`POST ${DATA}`]: audited('data.create', { target: byParams('collectionName') }),
  [`PUT ${DATA}/:id`]: audited('data.replace', { target: byParams('collectionName', 'id') }),
  [`PATCH ${DATA}/:id`]: audited('data.update', { target: byParams('collectionName', 'id') }),
  [`DELETE ${DATA}/:id`]: audited('data.delete', { target: byParams('collectionName', 'id'), detail: queryFlags('hard') }),
  [`POST ${DATA}/bulk`]: audited('data.bulk_create', { target: byParams('collectionName') }),
  [`POST ${DATA}/:id/restore`]: audited('data.restore', { target: byParams('collectionName', 'id') }),
  [`POST ${DATA}/bulk-delete`]: audited('data.bulk_delete', { target: byParams('collectionName'), body: true }),
  [`POST ${DATA}/bulk-restore`]: audited('data.bulk_restore', { target: byParams('collectionName'), body: true }),

  // Webhooks.
  [`POST ${P}/webhooks`]: audited('webhooks.create', { target: byBody('url'), body: true }),
  [`PATCH ${P}/webhooks/:endpointId`]: audited('webhooks.update', { target: byParams('endpointId'), snapshot: webhook }),
  [`DELETE ${P}/webhooks/:endpointId`]: audited('webhooks.delete', { target: byParams('endpointId'), snapshot: webhook }),
  [`POST ${P}/webhooks/:endpointId/test`]: audited('webhooks.test', { target: byParams('endpointId') }),
  [`POST ${P}/webhooks/:endpointId/deliveries/:deliveryId/redeliver`]: audited('webhooks.redeliver', { target: byParams('endpointId', 'deliveryId') }),

  // Functions and their secrets (a secret's value is never recorded: only its name).
  [`POST ${P}/functions`]: audited('functions.deploy', { target: byBody('name'), snapshot: fn }),
  [`PATCH ${P}/functions/:name`]: audited('functions.update', { target: byParams('name'), snapshot: fn }),
  [`POST ${P}/functions/:name/rollback`]: audited('functions.rollback', { target: byParams('name'), snapshot: fn }),
  [`DELETE ${P}/functions/:name`]: audited('functions.delete', { target: byParams('name'), snapshot: fn }),
  [`POST ${P}/functions/:name/run`]: audited('functions.run', { target: byParams('name') }),
  [`PUT ${P}/function-secrets/:name`]: audited('functions.secret_set', { target: byParams('name') }),
  [`DELETE ${P}/function-secrets/:name`]: audited('functions.secret_delete', { target: byParams('name') }),

  // Usage alerts (the webhook secret is never recorded: it is not in the snapshot).
  [`PUT ${P}/usage/alerts`]: audited('usage.alerts_update', { snapshot: (ctx, projectId) => alertSettingsOf(ctx, projectId) }),
};

/** The declaration of one route (`METHOD url` as registered), if the table has one. */
export const declarationOf = (method: string, url: string): AuditDeclaration | undefined => AUDIT_DECLARATIONS[`${method.toUpperCase()} ${url}`];
