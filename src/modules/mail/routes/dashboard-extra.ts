/**
 * What the console needs beyond the other dashboard mail routes: a live preview of a template
 * draft (the real renderer, nothing stored or sent), and audiences, contacts and broadcasts
 * for the project owner (the public routes take the secret key, which the console never
 * holds). Same services, same gates: own Resend key for audiences, plus Pro for broadcasts.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import type { ProjectRecord } from '../../projects/cache.js';
import { ProjectErrors } from '../../projects/errors.js';
import * as audiences from '../audiences.js';
import * as broadcasts from '../broadcasts.js';
import { render } from '../render.js';
import { ownedMailProject, ProjectParams } from './guards.js';

const tags = ['dashboard: mail'];
const AudienceParams = Type.Object({ projectId: Type.String(), audienceId: Type.String() });
const ContactParams = Type.Object({ projectId: Type.String(), audienceId: Type.String(), contactId: Type.String() });
const BroadcastParams = Type.Object({ projectId: Type.String(), id: Type.String() });
const PreviewBody = Type.Object(
  {
    subject: Type.Optional(Type.String({ maxLength: 200 })),
    html: Type.Optional(Type.String({ maxLength: 200_000 })),
    text: Type.Optional(Type.String({ maxLength: 200_000 })),
    variables: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);
const Contact = Type.Object({
  email: Type.Optional(Type.String()),
  firstName: Type.Optional(Type.String()),
  lastName: Type.Optional(Type.String()),
  unsubscribed: Type.Optional(Type.Boolean()),
});
const BroadcastBody = Type.Object({
  audienceId: Type.Optional(Type.String()),
  subject: Type.Optional(Type.String()),
  html: Type.Optional(Type.String()),
  scheduledAt: Type.Optional(Type.String()),
  from: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
});

/** The owned project as the mail services want it (the cached record, with its plan). */
async function ownedRecord(ctx: AppContext, req: FastifyRequest & { params: { projectId: string } }): Promise<ProjectRecord> {
  const owned = await ownedMailProject(ctx, req, req.params.projectId);
  const project = await ctx.projects.byId(owned.id);
  if (!project) throw ProjectErrors.project_not_found();
  return project;
}

export default async function dashboardMailExtraRoutes(app: App, ctx: AppContext): Promise<void> {
  const base = '/api/projects/:projectId/mail';

  app.post(
    `${base}/templates/preview`,
    { schema: { tags, summary: 'Render a template draft with variables (nothing is stored or sent)', params: ProjectParams, body: PreviewBody } },
    async (req) => {
      await ownedMailProject(ctx, req, req.params.projectId);
      const vars = req.body.variables ?? {};
      return ok({
        subject: render(req.body.subject ?? '', vars, false),
        html: render(req.body.html ?? '', vars, true),
        text: render(req.body.text ?? '', vars, false),
      });
    },
  );

  app.get(`${base}/audiences`, { schema: { tags, summary: 'List audiences (own Resend key)', params: ProjectParams } }, async (req) =>
    ok(await audiences.listAudiences(ctx, await ownedRecord(ctx, req))),
  );
  app.post(
    `${base}/audiences`,
    { schema: { tags, summary: 'Create an audience', params: ProjectParams, body: Type.Object({ name: Type.String() }) } },
    async (req) => ok(await audiences.createAudience(ctx, await ownedRecord(ctx, req), req.body.name), 'Audience created.'),
  );
  app.delete(`${base}/audiences/:audienceId`, { schema: { tags, summary: 'Delete an audience', params: AudienceParams } }, async (req) =>
    ok(await audiences.removeAudience(ctx, await ownedRecord(ctx, req), req.params.audienceId), 'Audience deleted.'),
  );
  app.get(`${base}/audiences/:audienceId/contacts`, { schema: { tags, summary: 'List the contacts of an audience', params: AudienceParams } }, async (req) =>
    ok(await audiences.listContacts(ctx, await ownedRecord(ctx, req), req.params.audienceId)),
  );
  app.post(
    `${base}/audiences/:audienceId/contacts`,
    { schema: { tags, summary: 'Add a contact', params: AudienceParams, body: Contact } },
    async (req) => ok(await audiences.createContact(ctx, await ownedRecord(ctx, req), req.params.audienceId, req.body), 'Contact created.'),
  );
  app.delete(`${base}/audiences/:audienceId/contacts/:contactId`, { schema: { tags, summary: 'Delete a contact', params: ContactParams } }, async (req) =>
    ok(await audiences.removeContact(ctx, await ownedRecord(ctx, req), req.params.audienceId, req.params.contactId), 'Contact deleted.'),
  );

  app.get(`${base}/broadcasts`, { schema: { tags, summary: 'List broadcasts (own Resend key, Pro)', params: ProjectParams } }, async (req) =>
    ok(await broadcasts.listBroadcasts(ctx, await ownedRecord(ctx, req))),
  );
  app.post(
    `${base}/broadcasts`,
    { schema: { tags, summary: 'Create a broadcast (draft, or scheduled with scheduledAt)', params: ProjectParams, body: BroadcastBody } },
    async (req) => ok(await broadcasts.createBroadcast(ctx, await ownedRecord(ctx, req), req.body), 'Broadcast created.'),
  );
  app.post(
    `${base}/broadcasts/:id/send`,
    { schema: { tags, summary: 'Send (or schedule) a broadcast', params: BroadcastParams, body: Type.Optional(Type.Object({ scheduledAt: Type.Optional(Type.String()) })) } },
    async (req) => ok(await broadcasts.sendBroadcast(ctx, await ownedRecord(ctx, req), req.params.id, req.body?.scheduledAt), 'Broadcast sent.'),
  );
  app.delete(`${base}/broadcasts/:id`, { schema: { tags, summary: 'Delete a broadcast', params: BroadcastParams } }, async (req) =>
    ok(await broadcasts.removeBroadcast(ctx, await ownedRecord(ctx, req), req.params.id), 'Broadcast deleted.'),
  );
}
