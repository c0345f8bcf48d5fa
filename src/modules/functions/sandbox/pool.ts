/**
 * The API process's side of the sandbox: a fixed pool of sandbox processes (child.ts), each
 * running one invocation at a time. What it guarantees, whatever the tenant's code does:
 *  - the API process runs no tenant code: its memory and event loop are out of reach;
 *  - a project holds at most `perProjectConcurrency` sandboxes, so a project that loops or
 *    floods leaves the rest of the pool to the others; its excess waits in a bounded queue;
 *  - a sandbox that does not answer by the invocation's wall time plus a grace is killed
 *    (SIGKILL) and replaced, and one that grew past `processRssMb` is replaced after it answers;
 *  - host calls (data, mail, fetch) are answered here, by the caller's `host`, for the
 *    invocation the sandbox is running and no other.
 */
import { fork, type ChildProcess } from 'node:child_process';
import type { DoneMessage, Failure, FromSandbox, InvocationLimits, LogLine, ToSandbox } from './protocol.js';

export interface SandboxPoolOptions {
  /** The built sandbox entry (dist/sandbox.js). */
  script: string;
  size: number;
  perProjectConcurrency: number;
  /** Invocations of one project waiting for a sandbox, beyond which new ones are refused. */
  perProjectQueue: number;
  /** Hard ceiling of one unit's WebAssembly memory, MiB. */
  memoryMb: number;
  /** A sandbox process above this resident size is replaced after its invocation, MiB. */
  processRssMb: number;
  /** The V8 heap of a sandbox process's own code (not the guests'), MiB. */
  heapMb: number;
  /** Time past an invocation's wall limit before its sandbox is killed. */
  graceMs: number;
  /** Sandboxes started at once (the rest start on demand, up to `size`). */
  prestart?: number;
  onEvent?: (event: SandboxEvent) => void;
}

export type SandboxEvent =
  | { type: 'killed'; pid: number | undefined; project: string; reason: string }
  | { type: 'exited'; pid: number | undefined; code: number | null; signal: string | null }
  | { type: 'recycled'; pid: number | undefined; rss: number };

export interface HostAnswer {
  value?: unknown;
  error?: { code: string; message: string; status?: number };
}

export interface InvokeRequest {
  project: string;
  /** The compiled unit's name: the project and the code's content hash. */
  unit: string;
  /** The unit's compiled JavaScript, asked for only when a sandbox does not hold it yet. */
  source: () => Promise<string>;
  entry: string;
  /** What the function is called with (its first argument). */
  event: unknown;
  /** `plinth.env`: the project's secrets. */
  env?: Record<string, string>;
  /** `plinth.caller`: who the function acts for. */
  caller?: Record<string, unknown>;
  limits: InvocationLimits;
  host: (name: string, args: string) => Promise<HostAnswer>;
}

export type PoolFailure = Failure | { kind: 'queue_full' | 'queue_timeout' | 'closed'; message: string };

export interface InvocationUsage {
  logs: LogLine[];
  logsDropped: number;
  cpuMs: number;
  wallMs: number;
}

type Result = { ok: true; value: unknown } | { ok: false; failure: PoolFailure };
type PartialOutcome = Result & Partial<Omit<InvocationUsage, 'wallMs'>>;

export type InvokeOutcome = InvocationUsage & Result;

interface Job {
  id: number;
  req: InvokeRequest;
  event: string;
  queuedAt: number;
  startedAt: number;
  resolve: (outcome: InvokeOutcome) => void;
  queueTimer?: NodeJS.Timeout;
  watchdog?: NodeJS.Timeout;
  /** Its sandbox was killed by the watchdog: the function ran past its time. */
  overran?: boolean;
}

interface Sandbox {
  proc: ChildProcess;
  units: Set<string>;
  job: Job | null;
  ready: boolean;
  retiring: boolean;
}

interface ProjectLoad {
  running: number;
  queued: number;
}

export class SandboxPool {
  #sandboxes = new Set<Sandbox>();
  #queue: Job[] = [];
  #projects = new Map<string, ProjectLoad>();
  #nextId = 1;
  #closed = false;
  #crashPause: NodeJS.Timeout | undefined;
  #opts: SandboxPoolOptions;

  constructor(opts: SandboxPoolOptions) {
    this.#opts = opts;
    // Sandboxes start when invocations need them: a node whose projects have no functions
    // holds none.
    for (let i = 0; i < Math.min(opts.prestart ?? 0, opts.size); i++) this.#spawn();
  }

  invoke(req: InvokeRequest): Promise<InvokeOutcome> {
    const empty = { logs: [], logsDropped: 0, cpuMs: 0, wallMs: 0 };
    if (this.#closed) return Promise.resolve({ ...empty, ok: false, failure: { kind: 'closed', message: 'the sandbox pool is closed' } });
    const load = this.#load(req.project);
    if (load.queued >= this.#opts.perProjectQueue) {
      return Promise.resolve({
        ...empty,
        ok: false,
        failure: { kind: 'queue_full', message: `more than ${this.#opts.perProjectConcurrency + this.#opts.perProjectQueue} invocations of this project at once` },
      });
    }
    let event: string;
    try {
      event = JSON.stringify({ event: req.event ?? null, env: req.env ?? {}, caller: req.caller ?? {} });
    } catch {
      event = '{"event":null,"env":{},"caller":{}}';
    }
    return new Promise((resolve) => {
      const job: Job = { id: this.#nextId++, req, event, queuedAt: performance.now(), startedAt: 0, resolve };
      load.queued += 1;
      this.#queue.push(job);
      // Waiting counts against the wall time: a caller never waits past it for a sandbox.
      job.queueTimer = setTimeout(() => this.#expire(job), req.limits.wallMs);
      this.#pump();
    });
  }

  stats(): { sandboxes: number; busy: number; queued: number; pids: number[] } {
    const all = [...this.#sandboxes];
    return {
      sandboxes: all.length,
      busy: all.filter((s) => s.job).length,
      queued: this.#queue.length,
      pids: all.map((s) => s.proc.pid ?? 0),
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#queue.splice(0)) this.#finish(job, { ok: false, failure: { kind: 'closed', message: 'the sandbox pool is closed' } });
    const exits = [...this.#sandboxes].map(
      (sb) => new Promise<void>((resolve) => (sb.proc.exitCode !== null || sb.proc.signalCode !== null ? resolve() : sb.proc.once('exit', () => resolve()))),
    );
    for (const sb of this.#sandboxes) sb.proc.kill('SIGKILL');
    await Promise.all(exits);
  }

  #load(project: string): ProjectLoad {
    let load = this.#projects.get(project);
    if (!load) {
      load = { running: 0, queued: 0 };
      this.#projects.set(project, load);
    }
    return load;
  }

  #spawn(): void {
    const proc = fork(this.#opts.script, [], {
      // Nothing of the node's environment (database URL, keys) reaches a sandbox.
      env: {},
      execArgv: [`--max-old-space-size=${this.#opts.heapMb}`],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
    const sb: Sandbox = { proc, units: new Set(), job: null, ready: false, retiring: false };
    this.#sandboxes.add(sb);
    proc.on('message', (msg: FromSandbox) => this.#onMessage(sb, msg));
    proc.on('exit', (code, signal) => this.#onExit(sb, code, signal));
    proc.on('error', () => proc.kill('SIGKILL'));
  }

  #send(sb: Sandbox, msg: ToSandbox): void {
    if (!sb.proc.connected) return;
    sb.proc.send(msg, (err) => {
      if (err) sb.proc.kill('SIGKILL');
    });
  }

  #pump(): void {
    if (this.#closed) return;
    for (const sb of this.#sandboxes) {
      if (!sb.ready || sb.job || sb.retiring) continue;
      const index = this.#runnable();
      if (index < 0) return;
      this.#start(sb, this.#queue.splice(index, 1)[0] as Job);
    }
    // Work that may run now and no free sandbox for it: start more, up to the size.
    if (this.#crashPause) return;
    const starting = [...this.#sandboxes].filter((sb) => !sb.ready).length;
    const wanted = Math.min(this.#runnableCount() - starting, this.#opts.size - this.#sandboxes.size);
    for (let i = 0; i < wanted; i++) this.#spawn();
  }

  /** Queued jobs that could start now, each project counted up to its free concurrency. */
  #runnableCount(): number {
    const free = new Map<string, number>();
    let n = 0;
    for (const job of this.#queue) {
      const project = job.req.project;
      const left = free.get(project) ?? this.#opts.perProjectConcurrency - this.#load(project).running;
      if (left > 0) n += 1;
      free.set(project, left - 1);
    }
    return n;
  }

  /** The first queued job whose project is under its concurrency. */
  #runnable(): number {
    return this.#queue.findIndex((job) => this.#load(job.req.project).running < this.#opts.perProjectConcurrency);
  }

  #start(sb: Sandbox, job: Job): void {
    clearTimeout(job.queueTimer);
    const load = this.#load(job.req.project);
    load.queued -= 1;
    load.running += 1;
    sb.job = job;
    job.startedAt = performance.now();
    const remaining = Math.max(1, job.req.limits.wallMs - (job.startedAt - job.queuedAt));
    job.watchdog = setTimeout(() => this.#kill(sb, 'did not answer within its wall time'), remaining + this.#opts.graceMs);
    void this.#sendInvoke(sb, job, !sb.units.has(job.req.unit), remaining);
  }

  async #sendInvoke(sb: Sandbox, job: Job, withSource: boolean, wallMs: number): Promise<void> {
    let source: string | undefined;
    if (withSource) {
      try {
        source = await job.req.source();
      } catch (err) {
        this.#settle(sb, job, { ok: false, failure: { kind: 'compile', message: err instanceof Error ? err.message : 'no source' } });
        return;
      }
      if (sb.job !== job) return;
    }
    this.#send(sb, {
      t: 'invoke',
      id: job.id,
      unit: job.req.unit,
      source,
      entry: job.req.entry,
      event: job.event,
      limits: { ...job.req.limits, wallMs: Math.floor(wallMs) },
      memoryMb: this.#opts.memoryMb,
    });
  }

  #onMessage(sb: Sandbox, msg: FromSandbox): void {
    if (msg.t === 'ready') {
      sb.ready = true;
      this.#pump();
      return;
    }
    const job = sb.job;
    if (!job || msg.id !== job.id) return;
    if (msg.t === 'need-source') {
      sb.units.delete(job.req.unit);
      void this.#sendInvoke(sb, job, true, Math.max(1, job.req.limits.wallMs - (performance.now() - job.queuedAt)));
    } else if (msg.t === 'host-call') {
      const { call } = msg;
      const name = typeof msg.name === 'string' ? msg.name.slice(0, 200) : '';
      const args = typeof msg.args === 'string' ? msg.args : 'null';
      job.req
        .host(name, args)
        .catch((): HostAnswer => ({ error: { code: 'function_host_error', message: 'the call failed' } }))
        .then((answer) => {
          if (sb.job === job) this.#send(sb, { t: 'host-result', id: job.id, call, body: JSON.stringify(answer) });
        });
    } else if (msg.t === 'done') {
      this.#onDone(sb, job, msg);
    }
  }

  #onDone(sb: Sandbox, job: Job, msg: DoneMessage): void {
    const failure = msg.failure;
    if (!failure || failure.kind === 'thrown' || failure.kind === 'no_entry') sb.units.add(job.req.unit);
    else sb.units.delete(job.req.unit);
    const logs = Array.isArray(msg.logs) ? msg.logs : [];
    const common = { logs, logsDropped: Number(msg.logsDropped) || 0, cpuMs: Number(msg.cpuMs) || 0 };
    let outcome: PartialOutcome;
    if (failure) outcome = { ...common, ok: false, failure };
    else {
      try {
        outcome = { ...common, ok: true, value: JSON.parse(String(msg.result)) };
      } catch {
        outcome = { ...common, ok: false, failure: { kind: 'bad_result', message: 'the function did not return JSON' } };
      }
    }
    if (Number(msg.rss) > this.#opts.processRssMb * 1024 * 1024) {
      this.#opts.onEvent?.({ type: 'recycled', pid: sb.proc.pid, rss: Number(msg.rss) });
      sb.retiring = true;
      sb.proc.kill('SIGKILL');
    }
    this.#settle(sb, job, outcome);
  }

  #settle(sb: Sandbox, job: Job, outcome: PartialOutcome): void {
    if (sb.job !== job) return;
    clearTimeout(job.watchdog);
    sb.job = null;
    this.#load(job.req.project).running -= 1;
    this.#finish(job, outcome);
    this.#pump();
  }

  #finish(job: Job, outcome: PartialOutcome): void {
    clearTimeout(job.queueTimer);
    job.resolve({
      logs: [],
      logsDropped: 0,
      cpuMs: 0,
      ...outcome,
      wallMs: Math.round((performance.now() - job.queuedAt) * 1000) / 1000,
    });
  }

  #expire(job: Job): void {
    const index = this.#queue.indexOf(job);
    if (index < 0) return;
    this.#queue.splice(index, 1);
    this.#load(job.req.project).queued -= 1;
    this.#finish(job, { ok: false, failure: { kind: 'queue_timeout', message: 'no sandbox was free within the wall time' } });
  }

  #kill(sb: Sandbox, reason: string): void {
    if (sb.job) sb.job.overran = true;
    this.#opts.onEvent?.({ type: 'killed', pid: sb.proc.pid, project: sb.job?.req.project ?? '', reason });
    sb.retiring = true;
    sb.proc.kill('SIGKILL');
  }

  #onExit(sb: Sandbox, code: number | null, signal: string | null): void {
    this.#sandboxes.delete(sb);
    this.#opts.onEvent?.({ type: 'exited', pid: sb.proc.pid, code, signal });
    const job = sb.job;
    if (job) {
      clearTimeout(job.watchdog);
      sb.job = null;
      this.#load(job.req.project).running -= 1;
      this.#finish(job, {
        ok: false,
        failure: job.overran
          ? { kind: 'wall_limit', message: `did not finish within ${job.req.limits.wallMs} ms` }
          : { kind: 'crashed', message: 'the sandbox stopped while running the function' },
      });
    }
    // A sandbox that died before it was ready (a broken install) is replaced after a pause, not
    // in a tight loop.
    if (!this.#closed && !sb.ready) {
      this.#crashPause = setTimeout(() => {
        this.#crashPause = undefined;
        this.#pump();
      }, 1000);
      this.#crashPause.unref();
      return;
    }
    this.#pump();
  }
}
