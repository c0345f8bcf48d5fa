/**
 * Which key pays for an AI request, and the platform key's monthly session cap.
 *
 * Order: the project key, then the owner's account key, then the platform key (GROQ_API_KEY).
 * Personal keys have no service-side cap. A platform session is reserved in usage_counters
 * (guarded upsert, per owner account per UTC month) before the provider is called and refunded
 * when the call fails. Keys are decrypted here, in memory, for the one request.
 */
import type { AppContext } from '../../context.js';
import { decrypt, type Encrypted } from '../../lib/crypto.js';
import type { AppError } from '../../lib/errors.js';
import { METRICS, refund, reserve, type Counter } from '../../lib/quota-queries.js';
import { findKeyOwner } from './queries.js';
import { utcMonth } from '../../lib/clock.js';
import { planOf } from '../plans/plans.js';
import { AiErrors, providerRateLimited } from './errors.js';
import { chatJson, ProviderError, type ChatMessage } from './provider.js';

export type KeySource = 'project' | 'account' | 'platform';

export interface SelectedKey {
  source: KeySource;
  apiKey: string;
}

/** The project an AI request runs for: its id, owner and stored secrets. */
export interface AiProject {
  id: string;
  owner_id: string;
  secrets: Record<string, Encrypted>;
}

interface Owner {
  id: string;
  plan: string;
  ai_key: Encrypted | null;
}

async function loadOwner(ctx: AppContext, ownerId: string): Promise<Owner> {
  return findKeyOwner(ctx.db.admin, ownerId);
}

function selectKey(ctx: AppContext, project: AiProject, owner: Owner): SelectedKey | null {
  if (planOf(owner.plan).personalAiKey) {
    const projectKey = decrypt(ctx.config.encryptionKey, project.secrets?.aiKey);
    if (projectKey) return { source: 'project', apiKey: projectKey };
    const accountKey = decrypt(ctx.config.encryptionKey, owner.ai_key);
    if (accountKey) return { source: 'account', apiKey: accountKey };
  }
  const platform = ctx.config.ai.groqApiKey;
  return platform ? { source: 'platform', apiKey: platform } : null;
}

/** Reserves one platform session for the owner this UTC month; 403 when the cap is reached. */
async function reserveSession(ctx: AppContext, owner: Owner): Promise<Counter> {
  const limit = planOf(owner.plan).aiSessionsPerMonth;
  const counter: Counter = { subjectId: owner.id, metric: METRICS.aiSessions, period: utcMonth(ctx.clock.now()) };
  const used = await reserve(ctx.db.admin, counter, 1, limit);
  if (used === null) {
    throw AiErrors.ai_session_limit_reached(
      `Monthly AI session limit reached (${limit} on the ${owner.plan} plan). It resets on the 1st of the month (UTC); ` +
        'configure a personal AI key (PUT /api/user/me/byok or PUT /api/projects/:projectId/byok) to keep going without a service-side limit.',
    );
  }
  return counter;
}

function toAppError(err: ProviderError, source: KeySource): AppError {
  switch (err.kind) {
    case 'auth':
      if (source === 'platform') {
        return AiErrors.ai_provider_failed('The AI provider rejected the platform key. This is a service configuration problem; please try again later.');
      }
      return AiErrors.ai_key_rejected(
        source === 'project'
          ? "The AI provider rejected this project's AI key. Fix it with PUT /api/projects/:projectId/byok (or send null to clear it)."
          : 'The AI provider rejected your account AI key. Fix it with PUT /api/user/me/byok (or send null to clear it).',
      );
    case 'rate_limited':
      return providerRateLimited(err.retryAfterSeconds);
    case 'bad_output':
      return AiErrors.ai_output_invalid('The AI model did not produce valid JSON. Try rephrasing the request.');
    case 'timeout':
      return AiErrors.ai_provider_timeout();
    default:
      return AiErrors.ai_provider_failed();
  }
}

/**
 * Runs one AI session for `project`: picks the key, reserves a platform session when needed,
 * calls the model and returns its JSON text. Failed calls are refunded and mapped to HTTP.
 */
export async function askModel(ctx: AppContext, project: AiProject, messages: ChatMessage[]): Promise<string> {
  const owner = await loadOwner(ctx, project.owner_id);
  const key = selectKey(ctx, project, owner);
  if (!key) throw AiErrors.ai_not_configured();
  const counter = key.source === 'platform' ? await reserveSession(ctx, owner) : null;
  const { groqBaseUrl, model, timeoutMs } = ctx.config.ai;
  ctx.usage.add(project.id, 'ai.calls');
  try {
    return await chatJson({ baseUrl: groqBaseUrl, apiKey: key.apiKey, model, timeoutMs, messages });
  } catch (err) {
    if (counter) await refund(ctx.db.admin, counter, 1);
    if (!(err instanceof ProviderError)) throw err;
    ctx.log.warn({ projectId: project.id, keySource: key.source, kind: err.kind, status: err.status }, 'AI provider call failed');
    throw toAppError(err, key.source);
  }
}
