/** Audiences and contacts (secret key + the project's own Resend key), proxied to Resend. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { projectOf } from '../../projects/api-key-auth.js';
import type { App } from '../../../app.js';
import * as svc from '../audiences.js';

const AudienceParams = Type.Object({ audienceId: Type.String() });
const ContactParams = Type.Object({ audienceId: Type.String(), contactId: Type.String() });
const Contact = {
  email: Type.Optional(Type.String()),
  firstName: Type.Optional(Type.String()),
  lastName: Type.Optional(Type.String()),
  unsubscribed: Type.Optional(Type.Boolean()),
};
const tags = ['mail: audiences'];

export default async function audienceRoutes(app: App, ctx: AppContext): Promise<void> {

  app.get('/api/mail/audiences', { schema: { tags, summary: 'List audiences' } }, async (req) =>
    ok(await svc.listAudiences(ctx, projectOf(req))),
  );
  app.post(
    '/api/mail/audiences',
    { schema: { tags, summary: 'Create an audience', body: Type.Object({ name: Type.String() }) } },
    async (req) => ok(await svc.createAudience(ctx, projectOf(req), req.body.name), 'Audience created.'),
  );
  app.delete(
    '/api/mail/audiences/:audienceId',
    { schema: { tags, summary: 'Delete an audience', params: AudienceParams } },
    async (req) => ok(await svc.removeAudience(ctx, projectOf(req), req.params.audienceId), 'Audience deleted.'),
  );
  app.get(
    '/api/mail/audiences/:audienceId/contacts',
    { schema: { tags, summary: 'List the contacts of an audience', params: AudienceParams } },
    async (req) => ok(await svc.listContacts(ctx, projectOf(req), req.params.audienceId)),
  );
  app.post(
    '/api/mail/audiences/:audienceId/contacts',
    { schema: { tags, summary: 'Add a contact', params: AudienceParams, body: Type.Object(Contact) } },
    async (req) => ok(await svc.createContact(ctx, projectOf(req), req.params.audienceId, req.body), 'Contact created.'),
  );
  app.patch(
    '/api/mail/audiences/:audienceId/contacts/:contactId',
    { schema: { tags, summary: 'Update a contact', params: ContactParams, body: Type.Object(Contact) } },
    async (req) =>
      ok(await svc.updateContact(ctx, projectOf(req), req.params.audienceId, req.params.contactId, req.body), 'Contact updated.'),
  );
  app.delete(
    '/api/mail/audiences/:audienceId/contacts/:contactId',
    { schema: { tags, summary: 'Delete a contact', params: ContactParams } },
    async (req) => ok(await svc.removeContact(ctx, projectOf(req), req.params.audienceId, req.params.contactId), 'Contact deleted.'),
  );
}
