/** Dashboard mail templates: project CRUD and the global system templates. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import type { App } from '../../../app.js';
import { planOf } from '../../plans/plans.js';
import * as svc from '../templates.js';
import { ownedMailProject, ProjectParams } from './guards.js';

const TemplateParams = Type.Object({ projectId: Type.String(), templateId: Type.String() });
const Fields = {
  key: Type.String({ maxLength: 100 }),
  name: Type.String({ minLength: 1, maxLength: 100 }),
  subject: Type.String({ minLength: 1, maxLength: 200 }),
  html: Type.String(),
  text: Type.String(),
};
const CreateBody = Type.Object({ ...Fields, key: Type.Optional(Fields.key), html: Type.Optional(Fields.html), text: Type.Optional(Fields.text) });
const PatchBody = Type.Partial(Type.Object(Fields));
const tags = ['dashboard: mail templates'];

export default async function templateRoutes(app: App, ctx: AppContext): Promise<void> {
  const base = '/api/projects/:projectId/mail/templates';

  app.get(base, { schema: { tags, summary: "The project's templates", params: ProjectParams } }, async (req) => {
    const p = await ownedMailProject(ctx, req, req.params.projectId);
    return ok({ templates: await svc.listProjectTemplates(ctx, p.id) });
  });
  app.get(`${base}/global`, { schema: { tags, summary: 'The global system templates', params: ProjectParams } }, async (req) => {
    const p = await ownedMailProject(ctx, req, req.params.projectId);
    return ok({ templates: await svc.listGlobalTemplates(ctx, p.id) });
  });
  app.get(`${base}/:templateId`, { schema: { tags, summary: 'One template', params: TemplateParams } }, async (req) => {
    const p = await ownedMailProject(ctx, req, req.params.projectId);
    return ok({ template: await svc.getTemplate(ctx, p.id, req.params.templateId) });
  });
  app.post(base, { schema: { tags, summary: 'Create a template', params: ProjectParams, body: CreateBody } }, async (req, reply) => {
    const p = await ownedMailProject(ctx, req, req.params.projectId);
    const template = await svc.createTemplate(ctx, p.id, planOf(operatorOf(req).plan), req.body);
    return reply.status(201).send(ok({ template }, 'Mail template created.'));
  });
  app.patch(`${base}/:templateId`, { schema: { tags, summary: 'Update a template', params: TemplateParams, body: PatchBody } }, async (req) => {
    const p = await ownedMailProject(ctx, req, req.params.projectId);
    const template = await svc.updateTemplate(ctx, p.id, planOf(operatorOf(req).plan), req.params.templateId, req.body);
    return ok({ template }, 'Mail template updated.');
  });
  app.delete(`${base}/:templateId`, { schema: { tags, summary: 'Delete a template', params: TemplateParams } }, async (req) => {
    const p = await ownedMailProject(ctx, req, req.params.projectId);
    await svc.deleteTemplate(ctx, p.id, req.params.templateId);
    return { success: true, data: {}, message: 'Mail template deleted.' };
  });
}
