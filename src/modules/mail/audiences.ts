/**
 * Audiences and contacts, proxied to Resend with the project's own key (403 without one).
 * Ids are Resend UUIDs: anything else is a 400 before any provider call.
 */
import type { AppContext } from '../../context.js';
import type { ProjectRecord } from '../projects/cache.js';
import { MailErrors } from './errors.js';
import { audienceProvider, unwrap } from './gating.js';
import { isUuid } from './logs.js';
import type { ContactInput } from './providers/resend.js';

function ids(...values: string[]): void {
  if (!values.every(isUuid)) throw MailErrors.mail_invalid_audience_id();
}

export async function listAudiences(ctx: AppContext, project: ProjectRecord) {
  return unwrap(audienceProvider(ctx, project, 'audiences').listAudiences());
}

export async function createAudience(ctx: AppContext, project: ProjectRecord, name: string) {
  const provider = audienceProvider(ctx, project, 'audiences');
  if (!name.trim()) throw MailErrors.mail_invalid_payload('name is required.');
  return unwrap(provider.createAudience(name.trim()));
}

export async function removeAudience(ctx: AppContext, project: ProjectRecord, audienceId: string) {
  const provider = audienceProvider(ctx, project, 'audiences');
  ids(audienceId);
  return unwrap(provider.removeAudience(audienceId));
}

export async function listContacts(ctx: AppContext, project: ProjectRecord, audienceId: string) {
  const provider = audienceProvider(ctx, project, 'contacts');
  ids(audienceId);
  return unwrap(provider.listContacts(audienceId));
}

export async function createContact(ctx: AppContext, project: ProjectRecord, audienceId: string, c: ContactInput) {
  const provider = audienceProvider(ctx, project, 'contacts');
  ids(audienceId);
  if (!c.email?.trim()) throw MailErrors.mail_invalid_payload('email is required.');
  return unwrap(provider.createContact(audienceId, { ...c, email: c.email.trim() }));
}

export async function updateContact(ctx: AppContext, project: ProjectRecord, audienceId: string, contactId: string, c: ContactInput) {
  const provider = audienceProvider(ctx, project, 'contacts');
  ids(audienceId, contactId);
  const { email: _email, ...rest } = c;
  return unwrap(provider.updateContact(audienceId, contactId, rest));
}

export async function removeContact(ctx: AppContext, project: ProjectRecord, audienceId: string, contactId: string) {
  const provider = audienceProvider(ctx, project, 'contacts');
  ids(audienceId, contactId);
  return unwrap(provider.removeContact(audienceId, contactId));
}
