/**
 * Errors of the AI domain (key settings, key selection, provider calls, model output).
 * Client mistakes are 4xx; a provider we cannot reach or that rejects the platform key is 502,
 * a provider that does not answer in time is 504, model output we refuse to pass on is 422.
 */
import { AppError, defineErrors } from '../../lib/errors.js';

export const AiErrors = defineErrors('ai', {
  invalid_ai_key: {
    status: 400,
    message: "Invalid AI key: it must start with 'gsk_', be at most 200 characters and contain no spaces or control characters.",
  },
  personal_ai_key_not_allowed: {
    status: 403,
    message: 'Personal AI keys are a Pro feature. Upgrade your plan to use your own key.',
  },
  ai_not_configured: {
    status: 503,
    message:
      'AI features are not available: no AI key is configured. Set a personal Groq key with PUT /api/user/me/byok ' +
      'or PUT /api/projects/:projectId/byok, or ask the platform operator to set GROQ_API_KEY.',
  },
  ai_session_limit_reached: {
    status: 403,
    message:
      'Monthly AI session limit reached for your plan. It resets on the 1st of the month (UTC); ' +
      'configure a personal AI key (PUT /api/user/me/byok) to keep going without a service-side limit.',
  },
  ai_key_rejected: {
    status: 401,
    message: 'The AI provider rejected your AI key. Update or clear it with PUT /api/user/me/byok or PUT /api/projects/:projectId/byok.',
  },
  ai_provider_failed: { status: 502, message: 'The AI provider failed to answer. Please try again later.' },
  ai_provider_timeout: { status: 504, message: 'The AI provider did not answer in time. Please try again later.' },
  ai_provider_rate_limited: { status: 429, message: 'The AI provider is rate limiting requests. Please try again later.' },
  ai_output_invalid: { status: 422, message: 'The AI model returned an answer that is not a valid result.' },
  ai_unknown_collection: { status: 404, message: 'Collection not found.' },
});

/** 429 passing the provider's Retry-After through (whole seconds, at least 1). */
export function providerRateLimited(retryAfterSeconds: number | undefined): AppError {
  const headers: Record<string, string> = {};
  if (retryAfterSeconds !== undefined) headers['retry-after'] = String(Math.max(1, Math.ceil(retryAfterSeconds)));
  return AiErrors.ai_provider_rate_limited(undefined, undefined, { headers });
}
