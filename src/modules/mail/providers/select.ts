/**
 * Which provider sends for a project, decided each time a message goes out:
 * the project's own Resend key (`byok`), else the platform key RESEND_API_KEY (`default`),
 * else the dev outbox. Also the sender address that goes with that key.
 */
import type { AppContext } from '../../../context.js';
import { decrypt, type Encrypted } from '../../../lib/crypto.js';
import type { MailProviderKind } from '../tables.js';
import { OutboxProvider } from './outbox.js';
import { ResendProvider } from './resend.js';
import type { MailProvider } from './types.js';

/** What the mail domain needs of a project (a ProjectRecord satisfies it). */
export interface MailProject {
  id: string;
  settings: Record<string, unknown>;
  secrets: Record<string, Encrypted>;
}

export interface Sender {
  provider: MailProvider;
  kind: MailProviderKind;
  from: string;
}

/** Resend's shared test sender: works on any account, for own-key projects without a from. */
const RESEND_DEFAULT_FROM = 'onboarding@resend.dev';

export function projectMailKey(ctx: AppContext, project: MailProject | null): string | null {
  return project ? decrypt(ctx.config.encryptionKey, project.secrets.mailApiKey) : null;
}

export function projectFrom(project: MailProject | null): string | undefined {
  const from = project?.settings.providerFromEmail;
  return typeof from === 'string' && from.trim() ? from.trim() : undefined;
}

export function senderFor(ctx: AppContext, project: MailProject | null): Sender {
  const own = projectMailKey(ctx, project);
  const { resendApiKey, resendBaseUrl, from } = ctx.config.mail;
  if (own) {
    return { kind: 'byok', provider: new ResendProvider('byok', own, resendBaseUrl), from: projectFrom(project) ?? RESEND_DEFAULT_FROM };
  }
  if (resendApiKey) return { kind: 'default', provider: new ResendProvider('default', resendApiKey, resendBaseUrl), from };
  return { kind: 'outbox', provider: new OutboxProvider(ctx, project?.id ?? null), from: projectFrom(project) ?? from };
}

/** Which kind would send now, without building a client (for the send answer and quota). */
export function senderKindFor(ctx: AppContext, project: MailProject | null): MailProviderKind {
  if (projectMailKey(ctx, project)) return 'byok';
  return ctx.config.mail.resendApiKey ? 'default' : 'outbox';
}

/** The provider that sent an existing log (for live status), or null when its key is gone. */
export function providerOfLog(ctx: AppContext, project: MailProject, kind: MailProviderKind): MailProvider | null {
  const { resendApiKey, resendBaseUrl } = ctx.config.mail;
  if (kind === 'outbox') return new OutboxProvider(ctx, project.id);
  const key = kind === 'byok' ? projectMailKey(ctx, project) : resendApiKey;
  return key ? new ResendProvider(kind, key, resendBaseUrl) : null;
}
