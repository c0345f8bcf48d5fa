/** Shared set-up of the AI tests: a test environment wired to a fake Groq on loopback. */
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { startFakeGroq, type FakeGroq } from '../../fakes/groq.js';
import type { TestOperator } from '../../helpers/fixtures.js';

export const PLATFORM_KEY = 'gsk_platform_0000000000000000000000000000';

export interface AiTestEnv {
  env: TestEnv;
  groq: FakeGroq;
  close(): Promise<void>;
}

export async function createAiEnv(extra: Record<string, string> = {}, platformKey: string | null = PLATFORM_KEY): Promise<AiTestEnv> {
  const groq = await startFakeGroq();
  const env = await createTestEnv({
    GROQ_BASE_URL: groq.baseUrl,
    AI_MODEL: 'fake-model',
    ...(platformKey ? { GROQ_API_KEY: platformKey } : {}),
    ...extra,
  });
  return {
    env,
    groq,
    async close() {
      await env.close();
      await groq.close();
    },
  };
}

export function putAccountKey(env: TestEnv, op: TestOperator, aiKey: unknown) {
  return env.app.inject({ method: 'PUT', url: '/api/user/me/byok', headers: op.auth, payload: { aiKey } });
}

export function putProjectKey(env: TestEnv, op: TestOperator, projectId: string, aiKey: unknown) {
  return env.app.inject({ method: 'PUT', url: `/api/projects/${projectId}/byok`, headers: op.auth, payload: { aiKey } });
}

export function buildQuery(env: TestEnv, op: TestOperator, projectId: string, body: Record<string, unknown>) {
  return env.app.inject({ method: 'POST', url: `/api/projects/${projectId}/ai/query-builder`, headers: op.auth, payload: body });
}

export function suggestSchema(env: TestEnv, op: TestOperator, projectId: string, body: Record<string, unknown>) {
  return env.app.inject({ method: 'POST', url: `/api/projects/${projectId}/ai/schema-suggest`, headers: op.auth, payload: body });
}
