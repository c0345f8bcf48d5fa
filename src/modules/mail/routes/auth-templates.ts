/**
 * Dashboard: the project's localized auth mails (verification, reset, magic link, email code).
 * GET the templates, the kinds with their variables and the default locale; PUT/DELETE one
 * template by kind and locale; PUT the default locale; POST a preview (stored or draft text,
 * rendered with sample values).
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { ok } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import { loadMemberProject } from '../../projects/access.js';
import * as svc from '../auth-mail-settings.js';

const tags = ['dashboard: mail templates'];
const Kind = Type.Union([Type.Literal('verification'), Type.Literal('reset'), Type.Literal('magic_link'), Type.Literal('email_code')]);
const ProjectParams = Type.Object({ projectId: Type.String() });
const TemplateParams = Type.Object({ projectId: Type.String(), kind: Kind, locale: Type.String({ maxLength: 20 }) });
const Template = Type.Object({ kind: Type.String(), locale: Type.String(), subject: Type.String(), html: Type.String(), text: Type.String(), updatedAt: Type.String() });
const Rendered = Type.Object({ subject: Type.String(), html: Type.String(), text: Type.String(), locale: Type.String(), source: Type.Union([Type.Literal('project'), Type.Literal('builtin')]) });
const envelope = <T extends ReturnType<typeof Type.Object>>(data: T) => Type.Object({ success: Type.Boolean(), data, message: Type.String() });

export default async function authTemplateRoutes(app: App, ctx: AppContext): Promise<void> {
  const base = '/api/projects/:projectId/mail/auth-templates';

  app.get(base, {
    schema: {
      tags,
      summary: "The project's auth mail templates by locale, the kinds and their variables, the default locale",
      params: ProjectParams,
      response: {
        200: envelope(Type.Object({
          defaultLocale: Type.String(),
          builtinLocales: Type.Array(Type.String()),
          kinds: Type.Array(Type.Object({ kind: Type.String(), variables: Type.Array(Type.String()) })),
          templates: Type.Array(Template),
        })),
      },
    },
    handler: async (req) => {
      const row = await loadMemberProject(ctx, operatorOf(req), req.params.projectId);
      return ok(await svc.listAuthMailSettings(ctx, row), 'Auth mail templates');
    },
  });

  app.put(`${base}/:kind/:locale`, {
    schema: {
      tags,
      summary: "Set the project's text of one auth mail in one locale (replaces the built-in text for that locale)",
      params: TemplateParams,
      body: Type.Object({ subject: Type.String({ minLength: 1, maxLength: 300 }), html: Type.Optional(Type.String({ maxLength: 100000 })), text: Type.Optional(Type.String({ maxLength: 100000 })) }, { additionalProperties: false }),
      response: { 200: envelope(Template) },
    },
    handler: async (req) => {
      const row = await loadMemberProject(ctx, operatorOf(req), req.params.projectId);
      return ok(await svc.setAuthTemplate(ctx, row.id, req.params.kind, req.params.locale, req.body), 'Auth mail template saved');
    },
  });

  app.delete(`${base}/:kind/:locale`, {
    schema: { tags, summary: "Delete the project's text of one auth mail in one locale (the built-in text applies again)", params: TemplateParams },
    handler: async (req) => {
      const row = await loadMemberProject(ctx, operatorOf(req), req.params.projectId);
      await svc.removeAuthTemplate(ctx, row.id, req.params.kind, req.params.locale);
      return ok(null, 'Auth mail template deleted');
    },
  });

  app.put(`${base}/default-locale`, {
    schema: {
      tags,
      summary: "The project's default locale for auth mails (when neither the user nor the request names a known one)",
      params: ProjectParams,
      body: Type.Object({ locale: Type.String({ maxLength: 20 }) }, { additionalProperties: false }),
      response: { 200: envelope(Type.Object({ defaultLocale: Type.String() })) },
    },
    handler: async (req) => {
      const row = await loadMemberProject(ctx, operatorOf(req), req.params.projectId);
      return ok({ defaultLocale: await svc.setDefaultLocale(ctx, row.id, req.body.locale) }, 'Default locale saved');
    },
  });

  app.post(`${base}/preview`, {
    schema: {
      tags,
      summary: 'Render an auth mail as a reader of the locale would get it (or a draft), with sample values',
      params: ProjectParams,
      body: Type.Object({
        kind: Kind,
        locale: Type.String({ maxLength: 20 }),
        subject: Type.Optional(Type.String({ maxLength: 300 })),
        html: Type.Optional(Type.String({ maxLength: 100000 })),
        text: Type.Optional(Type.String({ maxLength: 100000 })),
      }, { additionalProperties: false }),
      response: { 200: envelope(Rendered) },
    },
    handler: async (req) => {
      const row = await loadMemberProject(ctx, operatorOf(req), req.params.projectId);
      return ok(await svc.previewAuthMail(ctx, row, req.body), 'Preview');
    },
  });
}
