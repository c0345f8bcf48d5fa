/**
 * Sets an example app up on a running Plinth exactly as its developer would: through the
 * dashboard API only (an operator account, a project and its keys, the collections, webhook
 * endpoints). Used by `npm run example -- <name>` (scripts/example.ts) and by the examples'
 * browser tests (test/examples/).
 */
import { randomBytes } from 'node:crypto';

export interface CollectionSpec {
  name: string;
  schema: unknown[];
  rls?: { enabled: boolean; mode: 'public-read' | 'private'; ownerField: string };
  realtime?: boolean;
  searchLanguage?: string;
  /**
   * Access rules (docs/rules.md), set once every collection exists (a rule may look another
   * collection up): `PATCH /api/projects/:id/collections/:name/rules`.
   */
  rules?: Partial<Record<'list' | 'view' | 'create' | 'update' | 'delete', string>>;
}

/**
 * The project's end users, which every example signs up and in (examples/lib/web/signin.js):
 * sign-up and sign-in need this collection (docs/auth.md).
 */
export const END_USERS: CollectionSpec = {
  name: 'users',
  schema: [
    { key: 'email', type: 'String', required: true, unique: true },
    { key: 'password', type: 'String', required: true },
    { key: 'name', type: 'String' },
  ],
};

export interface ExampleSpec {
  /** The project's name in the console. */
  project: string;
  collections: CollectionSpec[];
  /** Webhook endpoints to add when a URL is given for them (the chat's message hook). */
  webhooks?: Array<{ events: string[]; collections: string[] }>;
  /** The project's server-side functions (docs/functions.md), deployed once the collections exist. */
  functions?: Array<{ name: string; kind: string; trigger?: Record<string, unknown>; language?: 'js' | 'ts'; source: string }>;
}

export interface Provisioned {
  base: string;
  projectId: string;
  publishableKey: string;
  secretKey: string;
  operatorToken: string;
  operatorEmail: string;
  /** A throwaway local operator's password, to look at the project in the console. */
  operatorPassword: string;
  /** `whsec_…` of each webhook endpoint added, in the order of `spec.webhooks`. */
  webhookSecrets: string[];
}

async function call<T>(base: string, method: string, path: string, body?: unknown, token?: string): Promise<T> {
  const res = await fetch(base + path, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as { success: boolean; data: T; message?: string };
  if (!res.ok || !json.success) throw new Error(`${method} ${path}: ${res.status} ${json.message ?? ''}`);
  return json.data;
}

export async function provision(base: string, spec: ExampleSpec, opts: { siteUrl: string; webhookUrl?: string }): Promise<Provisioned> {
  const operatorEmail = `example-${randomBytes(4).toString('hex')}@example.com`;
  const password = randomBytes(12).toString('base64url');
  await call(base, 'POST', '/api/auth/register', { email: operatorEmail, password, name: 'Example operator' });
  const { token } = await call<{ token: string }>(base, 'POST', '/api/auth/login', { email: operatorEmail, password });
  const project = await call<{ _id: string; publishableKey: string; secretKey: string }>(
    base, 'POST', '/api/projects', { name: spec.project, siteUrl: opts.siteUrl }, token);
  for (const { rules: _rules, ...c } of spec.collections) await call(base, 'POST', `/api/projects/${project._id}/collections`, c, token);
  for (const c of spec.collections) {
    if (c.rules) await call(base, 'PATCH', `/api/projects/${project._id}/collections/${c.name}/rules`, c.rules, token);
  }
  for (const f of spec.functions ?? []) await call(base, 'POST', `/api/projects/${project._id}/functions`, f, token);
  const webhookSecrets: string[] = [];
  if (opts.webhookUrl) {
    for (const w of spec.webhooks ?? []) {
      const made = await call<{ secret: string }>(base, 'POST', `/api/projects/${project._id}/webhooks`, { url: opts.webhookUrl, ...w }, token);
      webhookSecrets.push(made.secret);
    }
  }
  return {
    base,
    projectId: project._id,
    publishableKey: project.publishableKey,
    secretKey: project.secretKey,
    operatorToken: token,
    operatorEmail,
    operatorPassword: password,
    webhookSecrets,
  };
}
