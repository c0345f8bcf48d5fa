/**
 * The OpenAI-compatible chat-completions client (Groq by default, GROQ_BASE_URL). Global fetch,
 * one request, a hard timeout. Failures become a ProviderError with a kind the caller maps to
 * HTTP; no message ever carries the key or the provider's raw response text.
 */

export interface ChatMessage {
  role: 'system' | 'user';
  content: string;
}

export interface ChatRequest {
  baseUrl: string;
  apiKey: string;
  model: string;
  timeoutMs: number;
  messages: ChatMessage[];
}

export type ProviderFailure = 'auth' | 'rate_limited' | 'bad_output' | 'upstream' | 'timeout';

export class ProviderError extends Error {
  constructor(
    readonly kind: ProviderFailure,
    readonly status?: number,
    readonly retryAfterSeconds?: number,
  ) {
    super(`AI provider call failed (${kind}${status ? `, HTTP ${status}` : ''})`);
    this.name = 'ProviderError';
  }
}

/** Retry-After as seconds: a number of seconds or an HTTP date; undefined when absent or bad. */
function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - now) / 1000);
}

async function errorCode(res: Response): Promise<string | undefined> {
  try {
    const body = (await res.json()) as { error?: { code?: unknown } };
    return typeof body?.error?.code === 'string' ? body.error.code : undefined;
  } catch {
    return undefined;
  }
}

async function failureOf(res: Response): Promise<ProviderError> {
  if (res.status === 401 || res.status === 403) return new ProviderError('auth', res.status);
  if (res.status === 429) return new ProviderError('rate_limited', 429, parseRetryAfter(res.headers.get('retry-after')));
  // Groq answers 400 json_validate_failed when the model could not produce valid JSON.
  if (res.status === 400 && (await errorCode(res)) === 'json_validate_failed') return new ProviderError('bad_output', 400);
  return new ProviderError('upstream', res.status);
}

function contentOf(body: unknown): string {
  const choices = (body as { choices?: Array<{ message?: { content?: unknown } }> })?.choices;
  const content = Array.isArray(choices) ? choices[0]?.message?.content : undefined;
  if (typeof content !== 'string') throw new ProviderError('upstream', 200);
  return content;
}

async function post(req: ChatRequest): Promise<Response> {
  try {
    return await fetch(`${req.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${req.apiKey}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        model: req.model,
        messages: req.messages,
        response_format: { type: 'json_object' },
        temperature: 0,
      }),
      signal: AbortSignal.timeout(req.timeoutMs),
    });
  } catch (err) {
    const name = (err as { name?: string })?.name;
    // The original error is dropped on purpose: a bad header value would echo the key.
    throw new ProviderError(name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : 'upstream');
  }
}

/** One chat completion in JSON mode; resolves with the model's message content (a JSON text). */
export async function chatJson(req: ChatRequest): Promise<string> {
  const res = await post(req);
  if (!res.ok) throw await failureOf(res);
  let body: unknown;
  try {
    body = await res.json();
  } catch (err) {
    const name = (err as { name?: string })?.name;
    throw new ProviderError(name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : 'upstream', res.status);
  }
  return contentOf(body);
}
