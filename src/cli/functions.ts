/**
 * `plinth functions deploy <folder>` and `plinth functions list`: a project's functions from a
 * checkout, through the dashboard API of a running Plinth (docs/functions.md, "Deploying from a
 * checkout"). The folder holds `plinth.functions.json`, a list of `{name, kind, trigger?, file,
 * enabled?}`; each file is one function's source (`.ts`/`.mts` sent as TypeScript). A function
 * that does not exist is created; one whose active source and language are the same is left
 * alone (the API would make a new version on every PATCH with a source); otherwise the source is
 * deployed as a new version. The trigger and `enabled` are changed in place when they differ.
 *
 * Settings: PLINTH_URL (the server), PLINTH_PROJECT or --project (the project id), and
 * PLINTH_TOKEN (an operator access token, the `token` POST /api/auth/login answers) or
 * PLINTH_EMAIL and PLINTH_PASSWORD (the CLI signs in itself; an account with a second factor
 * must use a token).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

export const MANIFEST = 'plinth.functions.json';
const KINDS = ['http', 'before', 'after', 'auth', 'schedule'];

export class CliError extends Error {
  constructor(message: string, readonly code = 'cli_error', readonly exitCode = 1) {
    super(message);
  }
}

export interface ManifestEntry {
  name: string;
  kind: string;
  trigger?: Record<string, unknown>;
  file: string;
  enabled?: boolean;
}

/** The manifest, checked: a list (or `{functions: [...]}`) of entries with a name, a kind and a file in the folder. */
export function readManifest(folder: string): Array<ManifestEntry & { source: string; language: 'js' | 'ts' }> {
  const file = path.join(folder, MANIFEST);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as Error).message}`, 'manifest_invalid');
  }
  const list = Array.isArray(raw) ? raw : (raw as { functions?: unknown })?.functions;
  if (!Array.isArray(list)) throw new CliError(`${file}: expected a list of functions (or {"functions": [...]})`, 'manifest_invalid');
  const seen = new Set<string>();
  return list.map((e: unknown, i) => {
    const where = `${file}: entry ${i + 1}`;
    if (!e || typeof e !== 'object' || Array.isArray(e)) throw new CliError(`${where} is not an object`, 'manifest_invalid');
    const { name, kind, trigger, file: src, enabled } = e as Record<string, unknown>;
    if (typeof name !== 'string' || !/^[a-z0-9][a-z0-9_-]{0,62}$/.test(name)) throw new CliError(`${where}: "name" must be lower case letters, digits, - and _`, 'manifest_invalid');
    if (seen.has(name)) throw new CliError(`${where}: "${name}" appears twice`, 'manifest_invalid');
    seen.add(name);
    if (typeof kind !== 'string' || !KINDS.includes(kind)) throw new CliError(`${where}: "kind" must be one of ${KINDS.join(', ')}`, 'manifest_invalid');
    if (trigger !== undefined && (!trigger || typeof trigger !== 'object' || Array.isArray(trigger))) throw new CliError(`${where}: "trigger" must be an object`, 'manifest_invalid');
    if (enabled !== undefined && typeof enabled !== 'boolean') throw new CliError(`${where}: "enabled" must be true or false`, 'manifest_invalid');
    if (typeof src !== 'string' || !src) throw new CliError(`${where}: "file" is missing`, 'manifest_invalid');
    const full = path.resolve(folder, src);
    if (path.relative(path.resolve(folder), full).startsWith('..')) throw new CliError(`${where}: "file" must be inside the folder`, 'manifest_invalid');
    let source: string;
    try {
      source = readFileSync(full, 'utf8');
    } catch (err) {
      throw new CliError(`${where}: cannot read ${src}: ${(err as Error).message}`, 'manifest_invalid');
    }
    const language = /\.(m|c)?tsx?$/.test(src) ? 'ts' : 'js';
    return { name, kind, trigger: trigger as Record<string, unknown> | undefined, file: src, enabled: enabled as boolean | undefined, source, language };
  });
}

/** The manifest's trigger asks for nothing the stored one lacks (lists compared as sets, cron by its fields). */
export function sameTrigger(wanted: Record<string, unknown> | undefined, stored: Record<string, unknown>): boolean {
  if (!wanted) return true;
  const norm = (v: unknown): string => {
    if (Array.isArray(v)) return JSON.stringify([...new Set(v.map(String))].sort());
    if (typeof v === 'string') return JSON.stringify(v.trim().replace(/\s+/g, ' '));
    return JSON.stringify(v);
  };
  return Object.entries(wanted).every(([k, v]) => norm(v) === norm(stored[k]));
}

interface Settings {
  url: string;
  projectId: string;
  token?: string;
  email?: string;
  password?: string;
}

export class Client {
  private token?: string;
  constructor(private readonly s: Settings) {
    this.token = s.token;
  }

  private async send(method: string, url: string, body?: unknown, auth = true): Promise<{ status: number; json: Record<string, unknown> }> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (auth) headers.authorization = `Bearer ${await this.bearer()}`;
    let res: Response;
    try {
      res = await fetch(new URL(url, this.s.url), { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (err) {
      throw new CliError(`cannot reach ${this.s.url}: ${(err as Error & { cause?: Error }).cause?.message ?? (err as Error).message}`, 'unreachable');
    }
    const text = await res.text();
    let json: Record<string, unknown> = {};
    try {
      json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      throw new CliError(`${method} ${url}: unexpected answer (${res.status}): ${text.slice(0, 200)}`, 'bad_response');
    }
    return { status: res.status, json };
  }

  private async bearer(): Promise<string> {
    if (this.token) return this.token;
    if (!this.s.email || !this.s.password) throw new CliError('set PLINTH_TOKEN, or PLINTH_EMAIL and PLINTH_PASSWORD', 'no_credentials', 2);
    const { status, json } = await this.send('POST', '/api/auth/login', { email: this.s.email, password: this.s.password }, false);
    const data = json.data as { token?: string; mfaRequired?: boolean } | undefined;
    if (status >= 300 || json.success === false) throw apiError(status, json);
    if (data?.mfaRequired || !data?.token) throw new CliError('this account needs a second factor: sign in with the console and use PLINTH_TOKEN', 'mfa_required');
    return (this.token = data.token);
  }

  /** The answer's data; an error answer throws with the server's code and message. */
  async call<T>(method: string, url: string, body?: unknown): Promise<T> {
    const { status, json } = await this.send(method, url, body);
    if (status >= 300 || json.success === false) throw apiError(status, json);
    return json.data as T;
  }

  fn(...rest: string[]): string {
    return ['/api/projects', this.s.projectId, ...rest].map((p, i) => (i === 0 ? p : encodeURIComponent(p))).join('/');
  }
}

function apiError(status: number, json: Record<string, unknown>): CliError {
  return new CliError(`${String(json.message ?? `HTTP ${status}`)}`, String(json.code ?? `http_${status}`));
}

interface FunctionDetail {
  name: string;
  kind: string;
  trigger: Record<string, unknown>;
  enabled: boolean;
  version: number;
  versions: number;
  language: string;
  source: string;
}

export interface DeployLine {
  name: string;
  outcome: 'created' | 'deployed' | 'unchanged' | 'failed';
  version?: number;
  changes?: string[];
  error?: { code: string; message: string };
}

export async function deploy(client: Client, folder: string, print: (line: string) => void): Promise<DeployLine[]> {
  const entries = readManifest(folder);
  const out: DeployLine[] = [];
  for (const e of entries) {
    let line: DeployLine;
    try {
      line = await deployOne(client, e);
    } catch (err) {
      const c = err instanceof CliError ? err : new CliError((err as Error).message);
      line = { name: e.name, outcome: 'failed', error: { code: c.code, message: c.message } };
    }
    out.push(line);
    print(describe(line));
  }
  return out;
}

function describe(l: DeployLine): string {
  const extra = l.changes?.length ? ` (${l.changes.join(', ')})` : '';
  switch (l.outcome) {
    case 'created':
      return `${l.name}: created, version ${l.version}`;
    case 'deployed':
      return `${l.name}: deployed version ${l.version}${extra}`;
    case 'unchanged':
      return `${l.name}: unchanged, version ${l.version}${extra}`;
    case 'failed':
      return `${l.name}: failed: ${l.error!.code}: ${l.error!.message}`;
  }
}

async function deployOne(client: Client, e: ReturnType<typeof readManifest>[number]): Promise<DeployLine> {
  let existing: FunctionDetail | null = null;
  try {
    existing = await client.call<FunctionDetail>('GET', client.fn('functions', e.name));
  } catch (err) {
    if (!(err instanceof CliError && err.code === 'function_not_found')) throw err;
  }
  if (!existing) {
    const made = await client.call<FunctionDetail>('POST', client.fn('functions'), {
      name: e.name,
      kind: e.kind,
      source: e.source,
      language: e.language,
      ...(e.trigger ? { trigger: e.trigger } : {}),
      ...(e.enabled !== undefined ? { enabled: e.enabled } : {}),
    });
    return { name: e.name, outcome: 'created', version: made.version };
  }
  if (existing.kind !== e.kind) {
    throw new CliError(`the deployed function is of kind "${existing.kind}", the manifest says "${e.kind}": delete it first to change its kind`, 'function_kind_differs');
  }
  const change: Record<string, unknown> = {};
  const changes: string[] = [];
  const sourceChanged = existing.source !== e.source || existing.language !== e.language;
  if (sourceChanged) Object.assign(change, { source: e.source, language: e.language });
  if (!sameTrigger(e.trigger, existing.trigger)) {
    change.trigger = e.trigger;
    changes.push('trigger changed');
  }
  if (e.enabled !== undefined && e.enabled !== existing.enabled) {
    change.enabled = e.enabled;
    changes.push(e.enabled ? 'enabled' : 'disabled');
  }
  if (Object.keys(change).length === 0) return { name: e.name, outcome: 'unchanged', version: existing.version };
  const next = await client.call<FunctionDetail>('PATCH', client.fn('functions', e.name), change);
  return { name: e.name, outcome: sourceChanged ? 'deployed' : 'unchanged', version: next.version, changes };
}

export async function list(client: Client, print: (line: string) => void): Promise<void> {
  const fns = await client.call<FunctionDetail[]>('GET', client.fn('functions'));
  if (fns.length === 0) return print('No function in this project.');
  const rows = [['NAME', 'KIND', 'TRIGGER', 'VERSION', 'STATE'], ...fns.map((f) => [f.name, f.kind, JSON.stringify(f.trigger), `v${f.version}/${f.versions}`, f.enabled ? 'enabled' : 'disabled'])];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows) print(r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  '));
}

export const USAGE = `Usage: plinth functions deploy <folder> [--project <id>]
       plinth functions list [--project <id>]

deploy reads <folder>/${MANIFEST}: [{"name", "kind", "trigger", "file", "enabled"}]
and creates or updates each function (a new version only when its source changed).

Environment: PLINTH_URL (default http://127.0.0.1:3000), PLINTH_PROJECT (or --project),
PLINTH_TOKEN, or PLINTH_EMAIL and PLINTH_PASSWORD. See docs/functions.md.`;

export function settingsFrom(args: string[], env: NodeJS.ProcessEnv): { command: string; folder?: string; settings: Settings } {
  const rest: string[] = [];
  let project = env.PLINTH_PROJECT;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--project') project = args[++i];
    else if (a.startsWith('--project=')) project = a.slice('--project='.length);
    else rest.push(a);
  }
  const [command, folder, ...extra] = rest;
  if ((command !== 'deploy' && command !== 'list') || (command === 'deploy' && !folder) || extra.length || (command === 'list' && folder)) {
    throw new CliError(USAGE, 'usage', 2);
  }
  if (!project) throw new CliError('set PLINTH_PROJECT or pass --project <id>', 'no_project', 2);
  const url = env.PLINTH_URL || 'http://127.0.0.1:3000';
  try {
    new URL(url);
  } catch {
    throw new CliError(`PLINTH_URL is not a URL: ${url}`, 'bad_url', 2);
  }
  return { command, folder, settings: { url, projectId: project, token: env.PLINTH_TOKEN || undefined, email: env.PLINTH_EMAIL || undefined, password: env.PLINTH_PASSWORD || undefined } };
}

export async function main(args: string[], env: NodeJS.ProcessEnv, print = (l: string) => console.log(l), printErr = (l: string) => console.error(l)): Promise<number> {
  if (args[0] === '-h' || args[0] === '--help' || args.length === 0) {
    (args.length === 0 ? printErr : print)(USAGE);
    return args.length === 0 ? 2 : 0;
  }
  try {
    const { command, folder, settings } = settingsFrom(args, env);
    const client = new Client(settings);
    if (command === 'list') {
      await list(client, print);
      return 0;
    }
    const lines = await deploy(client, path.resolve(folder!), print);
    const failed = lines.filter((l) => l.outcome === 'failed');
    if (failed.length) printErr(`plinth functions deploy: ${failed.length} of ${lines.length} failed`);
    return failed.length ? 1 : 0;
  } catch (err) {
    const c = err instanceof CliError ? err : new CliError((err as Error).message);
    printErr(c.code === 'usage' ? c.message : `plinth functions: ${c.code}: ${c.message}`);
    return c.exitCode;
  }
}
