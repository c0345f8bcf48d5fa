/**
 * Feature gating for mail (docs/mail.md): send, batch, logs and live status for everyone;
 * audiences and contacts need the project's own Resend key; broadcasts need the own key AND
 * a plan with broadcasts (Pro). Also the one helper that unwraps proxied provider answers,
 * passing the provider's status and message through on failure.
 */
import type { AppContext } from '../../context.js';
import type { ProjectRecord } from '../projects/cache.js';
import { MailErrors, providerError } from './errors.js';
import { ResendProvider } from './providers/resend.js';
import { projectMailKey } from './providers/select.js';
import type { ProviderResult } from './providers/types.js';

function ownKeyProvider(ctx: AppContext, project: ProjectRecord): ResendProvider | null {
  const key = projectMailKey(ctx, project);
  return key ? new ResendProvider('byok', key, ctx.config.mail.resendBaseUrl) : null;
}

export function audienceProvider(ctx: AppContext, project: ProjectRecord, what: 'audiences' | 'contacts'): ResendProvider {
  const p = ownKeyProvider(ctx, project);
  if (!p) throw what === 'audiences' ? MailErrors.mail_audiences_need_key() : MailErrors.mail_contacts_need_key();
  return p;
}

export function broadcastProvider(ctx: AppContext, project: ProjectRecord): ResendProvider {
  const p = ownKeyProvider(ctx, project);
  if (!p || !project.plan.broadcasts) throw MailErrors.mail_broadcasts_gate();
  return p;
}

export async function unwrap<T>(call: Promise<ProviderResult<T>>): Promise<T> {
  const res = await call;
  if (!res.ok) throw providerError(res.status, res.message);
  return res.data;
}
