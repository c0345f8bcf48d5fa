/**
 * The API process's side of the sandbox: a fixed pool of sandbox processes (child.ts). A
 * sandbox serves one project at a time, up to `invocationsPerSandbox` of its invocations at once
 * (each in its own engine instance; they overlap while waiting on host calls, which is most of a
 * function's time). What it guarantees, whatever the tenant's code does:
 *  - the API process runs no tenant code: its memory and event loop are out of reach;
 *  - a project holds at most `perProjectConcurrency` sandboxes, so a project that loops or
 *    floods leaves the rest of the pool to the others; its excess waits in a bounded queue; a
 *    loop in one invocation holds up only its own project's invocations in that sandbox;
 *  - a project whose invocation hit a resource limit (CPU, memory, stack, wall time, a crash)
 *    holds one sandbox at most for `faultPenaltyMs` after its last such fault: an attacker keeps
 *    one core busy at most, whatever its concurrency (docs/functions.md "Noisy neighbours");
 *  - V8 collects a sandbox's garbage on its own thread: a memory bomb's collections stay on the
 *    core it already uses. (Sandboxes run at the API process's CPU priority: a lower one let a
 *    busy node starve well-behaved functions into their wall time.)
 *  - a sandbox that does not answer by the invocation's wall time plus a grace is killed
 *    (SIGKILL) and replaced, and one that grew past `processRssMb` is replaced after it answers;
 *  - host calls (data, mail, fetch) are answered here, by the caller's `host`, for the
 *    invocation the sandbox is running and no other.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { Outbox, unbatch } from './outbox.js';
import type { DoneMessage, Failure, FromSandbox, InvocationLimits, LogLine, ToSandbox } from './protocol.js';

export interface SandboxPoolOptions {
  /** The built sandbox entry (dist/sandbox.js). */
  script: string;
  size: number;
  perProjectConcurrency: number;
  /** Invocations of its project one sandbox runs at once (1: one at a time). */
  invocationsPerSandbox?: number;
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
  /** After an invocation hits a resource limit, its project holds one sandbox at most for this long. */
  faultPenaltyMs?: number;
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
  /** The value as JSON text the host already holds (the data API's own), sent as it is. */
  json?: string;
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
  /** Its running invocations, by id: all of one project's. */
  jobs: Map<number, Job>;
  /** The project it serves while it runs anything. */
  project: string | null;
  ready: boolean;
  retiring: boolean;
  outbox: Outbox<ToSandbox>;
}

interface ProjectLoad {
  running: number;
  queued: number;
  /** Sandboxes serving it now. */
  sandboxes: number;
  /** Until when (performance.now()) the project holds one sandbox at most, after a fault. */
  penaltyUntil: number;
}

/** Failures that cost the node's resources, not the function's own errors. */
const FAULTS: ReadonlySet<string> = new Set(['cpu_limit', 'memory_limit', 'stack_limit', 'wall_limit', 'crashed']);
const DEFAULT_FAULT_PENALTY_MS = 30_000;

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
      this.#release(req.project, load);
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
      busy: all.filter((s) => s.jobs.size > 0).length,
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
      load = { running: 0, queued: 0, sandboxes: 0, penaltyUntil: 0 };
      this.#projects.set(project, load);
    }
    return load;
  }

  #penalised(load: ProjectLoad): boolean {
    return load.penaltyUntil > performance.now();
  }

  /** How many sandboxes the project may hold now. */
  #sandboxLimit(load: ProjectLoad): number {
    return this.#penalised(load) ? 1 : this.#opts.perProjectConcurrency;
  }

  /** How many of its invocations one of its sandboxes may run at once now. */
  #slots(load: ProjectLoad): number {
    return this.#penalised(load) ? 1 : Math.max(1, this.#opts.invocationsPerSandbox ?? 1);
  }

  /** Forget an idle project with no penalty running, so the map holds only live projects. */
  #release(project: string, load: ProjectLoad): void {
    if (load.running === 0 && load.queued === 0 && load.penaltyUntil <= performance.now()) this.#projects.delete(project);
  }

  #spawn(): void {
    const proc = fork(this.#opts.script, [], {
      // Nothing of the node's environment (database URL, keys) reaches a sandbox.
      env: {},
      // One thread of garbage collection: a memory bomb's collections stay on its own core.
      execArgv: [`--max-old-space-size=${this.#opts.heapMb}`, '--single-threaded-gc'],
      // Every message is strings and plain JSON values: JSON costs the parent about half the CPU of
      // the structured clone per round trip (measured: 6–7 against 12 µs).
      serialization: 'json',
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
    const outbox = new Outbox<ToSandbox>((msg) => {
      if (!proc.connected) return;
      proc.send(msg, (err) => {
        if (err) proc.kill('SIGKILL');
      });
    });
    const sb: Sandbox = { proc, units: new Set(), jobs: new Map(), project: null, ready: false, retiring: false, outbox };
    this.#sandboxes.add(sb);
    proc.on('message', (msg: unknown) => {
      for (const one of unbatch<FromSandbox>(msg)) this.#onMessage(sb, one);
    });
    proc.on('exit', (code, signal) => this.#onExit(sb, code, signal));
    proc.on('error', () => proc.kill('SIGKILL'));
  }

  #send(sb: Sandbox, msg: ToSandbox): void {
    if (sb.proc.connected) sb.outbox.send(msg);
  }

  #pump(): void {
    if (this.#closed) return;
    // One pass in queue order: a job starts if its project may run one more, in a sandbox it
    // already holds with a free slot or in an idle one it may take.
    for (let i = 0; i < this.#queue.length; ) {
      const job = this.#queue[i] as Job;
      const sb = this.#placeFor(job.req.project);
      if (sb) {
        this.#queue.splice(i, 1);
        this.#start(sb, job);
      } else i += 1;
    }
    // Work that may run now and no sandbox for it: start more, up to the size.
    if (this.#crashPause) return;
    const starting = [...this.#sandboxes].filter((sb) => !sb.ready).length;
    const wanted = Math.min(this.#sandboxesWanted() - starting, this.#opts.size - this.#sandboxes.size);
    for (let i = 0; i < wanted; i++) this.#spawn();
  }

  /** A sandbox for one more invocation of `project` now, or null. */
  #placeFor(project: string): Sandbox | null {
    const load = this.#load(project);
    const slots = this.#slots(load);
    if (load.running >= this.#sandboxLimit(load) * slots) return null;
    let shared: Sandbox | null = null;
    let idle: Sandbox | null = null;
    for (const sb of this.#sandboxes) {
      if (!sb.ready || sb.retiring) continue;
      if (sb.jobs.size === 0) idle ??= sb;
      else if (sb.project === project && sb.jobs.size < slots && (!shared || sb.jobs.size < shared.jobs.size)) shared = sb;
    }
    // Spread over sandboxes first (each is a core), then share.
    if (idle && load.sandboxes < this.#sandboxLimit(load)) return idle;
    return shared;
  }

  /** Sandboxes the queue could use beyond the ones running: per project, what its waiting jobs fill, up to its limit. */
  #sandboxesWanted(): number {
    const waiting = new Map<string, number>();
    for (const job of this.#queue) waiting.set(job.req.project, (waiting.get(job.req.project) ?? 0) + 1);
    let wanted = 0;
    for (const [project, n] of waiting) {
      const load = this.#load(project);
      wanted += Math.max(0, Math.min(Math.ceil(n / this.#slots(load)), this.#sandboxLimit(load) - load.sandboxes));
    }
    return wanted;
  }

  #start(sb: Sandbox, job: Job): void {
    clearTimeout(job.queueTimer);
    const load = this.#load(job.req.project);
    load.queued -= 1;
    load.running += 1;
    if (sb.jobs.size === 0) {
      sb.project = job.req.project;
      load.sandboxes += 1;
    }
    sb.jobs.set(job.id, job);
    job.startedAt = performance.now();
    const remaining = Math.max(1, job.req.limits.wallMs - (job.startedAt - job.queuedAt));
    job.watchdog = setTimeout(() => this.#kill(sb, job, 'did not answer within its wall time'), remaining + this.#opts.graceMs);
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
      if (!sb.jobs.has(job.id)) return;
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
    const job = sb.jobs.get(msg.id);
    if (!job) return;
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
          const body = answer.json !== undefined ? `{"value":${answer.json}}` : JSON.stringify(answer);
          if (sb.jobs.get(job.id) === job) this.#send(sb, { t: 'host-result', id: job.id, call, body });
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
    if (Number(msg.rss) > this.#opts.processRssMb * 1024 * 1024 && !sb.retiring) {
      // Takes no more work; killed once its other invocations have answered.
      this.#opts.onEvent?.({ type: 'recycled', pid: sb.proc.pid, rss: Number(msg.rss) });
      sb.retiring = true;
    }
    this.#settle(sb, job, outcome);
  }

  #settle(sb: Sandbox, job: Job, outcome: PartialOutcome): void {
    if (sb.jobs.get(job.id) !== job) return;
    this.#leave(sb, job);
    this.#ended(job, outcome);
    if (sb.retiring && sb.jobs.size === 0) sb.proc.kill('SIGKILL');
    this.#pump();
  }

  /** The job no longer runs in the sandbox; the sandbox no longer serves its project once empty. */
  #leave(sb: Sandbox, job: Job): void {
    clearTimeout(job.watchdog);
    sb.jobs.delete(job.id);
    if (sb.jobs.size === 0 && sb.project !== null) {
      this.#load(sb.project).sandboxes -= 1;
      sb.project = null;
    }
  }

  /** A running job is over: its project's count, a fault's penalty, the caller answered. */
  #ended(job: Job, outcome: PartialOutcome): void {
    const load = this.#load(job.req.project);
    load.running -= 1;
    if (!outcome.ok && FAULTS.has(outcome.failure.kind)) {
      load.penaltyUntil = performance.now() + (this.#opts.faultPenaltyMs ?? DEFAULT_FAULT_PENALTY_MS);
    }
    this.#finish(job, outcome);
    this.#release(job.req.project, load);
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
    const load = this.#load(job.req.project);
    load.queued -= 1;
    this.#finish(job, { ok: false, failure: { kind: 'queue_timeout', message: 'no sandbox was free within the wall time' } });
    this.#release(job.req.project, load);
  }

  #kill(sb: Sandbox, job: Job, reason: string): void {
    job.overran = true;
    this.#opts.onEvent?.({ type: 'killed', pid: sb.proc.pid, project: job.req.project, reason });
    sb.retiring = true;
    sb.proc.kill('SIGKILL');
  }

  #onExit(sb: Sandbox, code: number | null, signal: string | null): void {
    this.#sandboxes.delete(sb);
    this.#opts.onEvent?.({ type: 'exited', pid: sb.proc.pid, code, signal });
    for (const job of [...sb.jobs.values()]) {
      this.#leave(sb, job);
      this.#ended(job, {
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
