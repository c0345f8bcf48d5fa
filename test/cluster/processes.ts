/**
 * Plinth processes for the cluster rig and bench/cluster.ts (no vitest here): an API node
 * (`dist/main.js`) or a worker (`dist/worker.js`) in its own process group, its output kept;
 * readiness by polling; an HTTP client that behaves like a plain client.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface Node {
  name: string;
  kind: 'api' | 'worker';
  /** http://127.0.0.1:port for an API node ('' for a worker). */
  url: string;
  child: ChildProcess;
  /** A worker's graphile-worker ids (from its heartbeat row). */
  workerIds: string[];
  /** Every line the process wrote (stdout and stderr), for assertions and failure reports. */
  lines: string[];
  alive(): boolean;
  /** Signals the whole process group; resolves once the process has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as net.AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** Polls `probe` until it returns something truthy; the error names what was awaited. */
export async function until<T>(what: string, probe: () => Promise<T | undefined | null | false>, ms = 90_000, every = 100): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, every));
  }
}

const live = new Set<ChildProcess>();
// A test process that dies without its afterAll must not leave the cluster running.
process.once('exit', () => {
  for (const c of live) killGroup(c, 'SIGKILL');
});

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
}

export function spawnNode(name: string, kind: Node['kind'], env: Record<string, string>, port?: number): Node {
  const entry = kind === 'api' ? 'dist/main.js' : 'dist/worker.js';
  const child = spawn(process.execPath, ['--enable-source-maps', entry], {
    cwd: ROOT,
    detached: true, // its own process group: kill(-pid) reaches anything it starts
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '', ...env, ...(port ? { PORT: String(port) } : {}) },
  });
  live.add(child);
  const lines: string[] = [];
  const collect = (stream: NodeJS.ReadableStream | null) => {
    let rest = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop() ?? '';
      lines.push(...parts);
    });
  };
  collect(child.stdout);
  collect(child.stderr);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', () => live.delete(child));
  const node: Node = {
    name,
    kind,
    url: port ? `http://127.0.0.1:${port}` : '',
    workerIds: [],
    child,
    lines,
    alive: () => child.exitCode === null && child.signalCode === null,
    async kill(signal = 'SIGTERM') {
      if (!node.alive()) return;
      killGroup(child, signal);
      const force = setTimeout(() => killGroup(child, 'SIGKILL'), 15_000);
      await exited;
      clearTimeout(force);
    },
  };
  return node;
}

export function describeFailure(node: Node): string {
  return `${node.name} (exit ${node.child.exitCode ?? node.child.signalCode}):\n${node.lines.slice(-30).join('\n')}`;
}

export async function waitApiReady(node: Node): Promise<void> {
  await until(`${node.name} to answer /api/health`, async () => {
    if (!node.alive()) throw new Error(`process exited before it was ready: ${describeFailure(node)}`);
    const res = await fetch(`${node.url}/api/health`, { signal: AbortSignal.timeout(5000) });
    return res.status === 200;
  });
}

export interface Reply {
  status: number;
  headers: Headers;
  body: string;
  json(): any; // eslint-disable-line @typescript-eslint/no-explicit-any
  cookies: Record<string, string>;
}

/** One HTTP call to a node, the way a client would make it (JSON body, no redirects followed). */
export async function call(
  node: Node | string,
  method: string,
  url: string,
  opts: { headers?: Record<string, string>; body?: unknown; cookies?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Reply> {
  const base = typeof node === 'string' ? node : node.url;
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  if (opts.cookies) headers.cookie = Object.entries(opts.cookies).map(([k, v]) => `${k}=${v}`).join('; ');
  const res = await fetch(base + url, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    redirect: 'manual',
    signal: AbortSignal.timeout(opts.timeoutMs ?? 20_000),
  });
  const body = await res.text();
  const cookies: Record<string, string> = {};
  for (const c of res.headers.getSetCookie()) {
    const [pair] = c.split(';');
    const i = pair!.indexOf('=');
    cookies[pair!.slice(0, i).trim()] = pair!.slice(i + 1);
  }
  return { status: res.status, headers: res.headers, body, json: () => JSON.parse(body), cookies };
}
