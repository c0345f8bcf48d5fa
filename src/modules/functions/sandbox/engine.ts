/**
 * The sandbox process's side: QuickJS (quickjs-ng, compiled to WebAssembly) running tenants'
 * units. One unit is one project's code at one version: its own WebAssembly module instance,
 * runtime and context, running one invocation at a time. Invocations of the same code that
 * overlap (the pool sends a sandbox several of one project's, while they wait on host calls)
 * each get an instance of their own: they share nothing but this process's thread, and a slice
 * of guest code is synchronous, so CPU is counted per invocation. Walls, innermost first:
 *  - the interpreter: the guest sees only the ECMAScript built-ins, `console` and one bridge
 *    function, never the host's objects (values cross as strings);
 *  - the unit's WebAssembly memory, imported with a fixed maximum: the engine's own memory
 *    limit is only advisory (many small strings or typed arrays pass it), but memory.grow past
 *    the maximum fails and QuickJS answers "out of memory" (docs/functions.md, measured);
 *  - a CPU deadline polled by the interpreter, a small stack, and after any limit or abort the
 *    unit is thrown away, never reused (a runtime may be inconsistent after an OOM);
 *  - this whole process, which holds no secret and no connection, and which the pool kills and
 *    replaces when it stops answering or grows (pool.ts).
 */
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSContext,
  type QuickJSDeferredPromise,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSSyncVariant,
} from 'quickjs-emscripten-core';
import ngVariant from '@jitl/quickjs-ng-wasmfile-release-sync';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { GUEST_PRELUDE, UNIT_GLOBAL } from './guest-prelude.js';
import { GUEST_STDLIB } from './guest-stdlib.js';
import { hostSync, SYNC_LIMITS } from './host-sync.js';
import type { DoneMessage, Failure, InvokeMessage, LogLine } from './protocol.js';

// The package's types describe its CommonJS build; imported as ESM, the default is the variant.
const VARIANT = ((ngVariant as unknown as { default?: QuickJSSyncVariant }).default ?? ngVariant) as QuickJSSyncVariant;
const PAGE = 64 * 1024;
/**
 * The engine's WebAssembly, compiled once per process: each unit then only instantiates it with
 * its own memory (a few milliseconds, against tens to hundreds for a compile).
 */
let compiled: Promise<WebAssembly.Module> | undefined;
function engineModule(): Promise<WebAssembly.Module> {
  compiled ??= (async () => {
    const pkg = createRequire(import.meta.url).resolve('@jitl/quickjs-ng-wasmfile-release-sync/package.json');
    return WebAssembly.compile(await readFile(path.join(path.dirname(pkg), 'dist', 'emscripten-module.wasm')));
  })();
  return compiled;
}
const INITIAL_MEMORY = 16 * 1024 * 1024;
const STACK_BYTES = 256 * 1024;
/** Unit instances kept warm per sandbox process; the least recently used idle one is dropped past it. */
const MAX_UNITS = 32;
const MAX_LOG_LINE = 8 * 1024;

export interface HostBridge {
  call(name: string, args: string): Promise<string>;
}

interface Invocation {
  msg: InvokeMessage;
  bridge: HostBridge;
  cpuMs: number;
  logs: LogLine[];
  logBytes: number;
  logsDropped: number;
  hostCalls: number;
  pending: Set<QuickJSDeferredPromise>;
  /** The guest's timers still waiting (setTimeout), by the guest's id, and how many were ever set. */
  timers: Map<number, { handle: NodeJS.Timeout; deferred: QuickJSDeferredPromise }>;
  timersSet: number;
  /** Set once the invocation has ended: late host answers are ignored. */
  over: boolean;
  /** Checks, after each slice of guest code, whether the function's promise has settled. */
  afterSlice?: () => void;
}

interface Unit {
  name: string;
  memory: WebAssembly.Memory;
  maxBytes: number;
  runtime: QuickJSRuntime;
  context: QuickJSContext;
  invoke: QuickJSHandle;
  current: Invocation | null;
  /** performance.now() when the slice started: the guest's CPU in a slice is at most this long. */
  sliceWallStart: number;
  /** The process's CPU (ms) at a reading taken before the slice started (cpuBefore). */
  sliceCpuBase: number;
  /**
   * The process's CPU (ms) read once the slice ran past SLICE_WALL_MS, and what the slice was
   * charged up to there; it is charged its CPU from there. Null while the slice is short.
   */
  sliceCpuMark: number | null;
  sliceChargedAtMark: number;
  lastUsed: number;
  /** CPU allowed to evaluate the unit's top level: the first invocation's own budget. */
  compileCpuMs: number;
}

/** How the function's promise ended, as the host saw it after a slice. */
interface Settled {
  value?: QuickJSHandle;
  error?: QuickJSHandle;
  /** Still pending, and the invocation is past its CPU budget. */
  overCpu?: true;
}

export class Engine {
  /** The instances of each unit, by the unit's name. */
  #units = new Map<string, Unit[]>();
  /** Each unit's source while any instance of it lives, to start another without asking. */
  #sources = new Map<string, string>();
  #count = 0;

  /** Throws one instance away (after a limit, or to make room); the last one takes the source along. */
  drop(unit: Unit): void {
    const list = this.#units.get(unit.name);
    const index = list ? list.indexOf(unit) : -1;
    if (!list || index < 0) return;
    list.splice(index, 1);
    this.#count -= 1;
    if (list.length === 0) {
      this.#units.delete(unit.name);
      this.#sources.delete(unit.name);
    }
    this.#dispose(unit);
  }

  async run(msg: InvokeMessage, bridge: HostBridge): Promise<Omit<DoneMessage, 't' | 'id' | 'rss'> | 'need-source'> {
    let unit = this.#units.get(msg.unit)?.find((u) => !u.current);
    if (!unit) {
      const source = msg.source ?? this.#sources.get(msg.unit);
      if (source === undefined) return 'need-source';
      const made = await this.#create(msg.unit, source, msg.memoryMb, msg.limits.cpuMs);
      if ('failure' in made) return { failure: made.failure, logs: [], logsDropped: 0, cpuMs: 0 };
      unit = made;
    }
    unit.lastUsed = Date.now();
    const inv: Invocation = {
      msg,
      bridge,
      cpuMs: 0,
      logs: [],
      logBytes: 0,
      logsDropped: 0,
      hostCalls: 0,
      pending: new Set(),
      timers: new Map(),
      timersSet: 0,
      over: false,
    };
    unit.current = inv;
    const outcome = await this.#invoke(unit, inv);
    inv.over = true;
    unit.current = null;
    // A timer still waiting when the function answered never fires.
    for (const timer of inv.timers.values()) clearTimeout(timer.handle);
    inv.timers.clear();
    for (const deferred of inv.pending) deferred.dispose();
    // Any limit or engine failure retires the unit; a unit whose memory is at its ceiling too,
    // even if the function caught the "out of memory" itself.
    const retire =
      ('failure' in outcome && outcome.failure.kind !== 'thrown' && outcome.failure.kind !== 'no_entry') ||
      unit.memory.buffer.byteLength + 2 * PAGE * 16 > unit.maxBytes;
    if (retire) this.drop(unit);
    return { ...outcome, logs: inv.logs, logsDropped: inv.logsDropped, cpuMs: Math.round(inv.cpuMs * 1000) / 1000 };
  }

  async #create(name: string, source: string, memoryMb: number, compileCpuMs: number): Promise<Unit | { failure: Failure }> {
    while (this.#count >= MAX_UNITS && this.#evictOldest());
    const maxBytes = Math.max(memoryMb * 1024 * 1024, INITIAL_MEMORY);
    const memory = new WebAssembly.Memory({ initial: INITIAL_MEMORY / PAGE, maximum: maxBytes / PAGE });
    const module = await newQuickJSWASMModuleFromVariant(newVariant(VARIANT, { wasmMemory: memory, wasmModule: await engineModule() }));
    const runtime = module.newRuntime();
    runtime.setMaxStackSize(STACK_BYTES);
    const context = runtime.newContext();
    const unit: Unit = {
      name,
      memory,
      maxBytes,
      runtime,
      context,
      invoke: context.undefined,
      current: null,
      sliceWallStart: 0,
      sliceCpuBase: 0,
      sliceCpuMark: null,
      sliceChargedAtMark: 0,
      lastUsed: Date.now(),
      compileCpuMs,
    };
    runtime.setInterruptHandler(() => {
      const inv = unit.current;
      const budget = inv ? inv.msg.limits.cpuMs : unit.compileCpuMs;
      const used = inv?.cpuMs ?? 0;
      // Polled often: past the mark, the CPU is read only once the wall time could have reached the budget.
      if (unit.sliceCpuMark !== null && used + (performance.now() - unit.sliceWallStart) <= budget) return false;
      return used + sliceSpent(unit, true) > budget;
    });
    this.#defineHostFunctions(unit);
    const prelude = this.#slice(unit, null, () => context.evalCode(GUEST_PRELUDE, 'plinth:prelude'));
    if (prelude.error) {
      prelude.error.dispose();
      this.#dispose(unit);
      return { failure: { kind: 'crashed', message: 'the sandbox prelude did not evaluate' } };
    }
    unit.invoke = prelude.value;
    if (!this.#installStdlib(unit)) {
      this.#dispose(unit);
      return { failure: { kind: 'crashed', message: 'the sandbox standard library did not evaluate' } };
    }
    const evaluated = this.#slice(unit, null, () => context.evalCode(source, 'function.js'));
    if (evaluated.error) {
      const failure = this.#classify(unit, evaluated.error, 'compile');
      evaluated.error.dispose();
      this.#dispose(unit);
      return { failure };
    }
    evaluated.value.dispose();
    const list = this.#units.get(name);
    if (list) list.push(unit);
    else this.#units.set(name, [unit]);
    this.#sources.set(name, source);
    this.#count += 1;
    return unit;
  }

  #dispose(unit: Unit): void {
    // A runtime after an OOM or interrupt may fail its own consistency checks on dispose
    // (quickjs-emscripten #257): then the references are simply let go, and the module with its
    // memory is garbage once nothing points at it.
    try {
      unit.invoke.dispose();
      unit.context.dispose();
      unit.runtime.dispose();
    } catch {
      /* let go all the same */
    }
  }

  /** Drops the least recently used idle instance; false when every one is running (the pool bounds that). */
  #evictOldest(): boolean {
    let oldest: Unit | undefined;
    for (const list of this.#units.values()) for (const unit of list) if (!unit.current && (!oldest || unit.lastUsed < oldest.lastUsed)) oldest = unit;
    if (!oldest) return false;
    this.drop(oldest);
    return true;
  }

  /** Runs guest code, counting the time against the invocation's CPU budget. */
  #slice<T>(unit: Unit, inv: Invocation | null, run: () => T): T {
    unit.sliceWallStart = performance.now();
    unit.sliceCpuBase = cpuBefore(unit.sliceWallStart);
    unit.sliceCpuMark = null;
    try {
      return run();
    } finally {
      if (inv) {
        inv.cpuMs += sliceSpent(unit, false);
        inv.afterSlice?.();
      }
    }
  }

  #defineHostFunctions(unit: Unit): void {
    const { context } = unit;
    const hostCall = context.newFunction('__plinthHostCall', (nameHandle, argsHandle) => {
      const inv = unit.current;
      const deferred = context.newPromise();
      if (!inv || inv.over) {
        deferred.reject(context.newError('no invocation is running'));
        return deferred.handle;
      }
      inv.hostCalls += 1;
      if (inv.hostCalls > inv.msg.limits.hostCalls) {
        const error = context.newError(`more than ${inv.msg.limits.hostCalls} calls to plinth in one invocation`);
        context.setProp(error, 'code', context.newString('function_host_calls_limit'));
        deferred.reject(error);
        error.dispose();
        return deferred.handle;
      }
      const name = context.typeof(nameHandle) === 'string' ? context.getString(nameHandle) : '';
      const args = context.typeof(argsHandle) === 'string' ? context.getString(argsHandle) : 'null';
      inv.pending.add(deferred);
      void inv.bridge.call(name, args).then((body) => {
        inv.pending.delete(deferred);
        if (inv.over || !deferred.alive) return;
        const value = context.newString(body);
        deferred.resolve(value);
        value.dispose();
        deferred.dispose();
        this.#slice(unit, inv, () => unit.runtime.executePendingJobs());
      });
      return deferred.handle;
    });
    context.setProp(context.global, '__plinthHostCall', hostCall);
    hostCall.dispose();

    const log = context.newFunction('__plinthLog', (levelHandle, textHandle) => {
      const inv = unit.current;
      if (!inv) return;
      const level = context.typeof(levelHandle) === 'string' ? context.getString(levelHandle) : 'log';
      let text = context.typeof(textHandle) === 'string' ? context.getString(textHandle) : '';
      if (text.length > MAX_LOG_LINE) text = text.slice(0, MAX_LOG_LINE) + '…';
      const bytes = Buffer.byteLength(text);
      if (inv.logBytes + bytes > inv.msg.limits.logBytes) {
        inv.logsDropped += 1;
        return;
      }
      inv.logBytes += bytes;
      inv.logs.push({ level: LEVELS.has(level) ? (level as LogLine['level']) : 'log', text, at: Date.now() });
    });
    context.setProp(context.global, '__plinthLog', log);
    log.dispose();
  }

  /**
   * The Web standards (guest-stdlib.ts): its code evaluates to a function, called once with the
   * two bridges it needs as arguments, so they are never on the global object.
   */
  #installStdlib(unit: Unit): boolean {
    const { context } = unit;
    const evaluated = this.#slice(unit, null, () => context.evalCode(GUEST_STDLIB, 'plinth:stdlib'));
    if (evaluated.error) {
      evaluated.error.dispose();
      return false;
    }
    const sync = context.newFunction('hostSync', (nameHandle, argsHandle, bytesHandle) => {
      const name = boundedString(context, nameHandle, SYNC_LIMITS.name);
      const args = boundedString(context, argsHandle, SYNC_LIMITS.args);
      const withBytes = bytesHandle !== undefined && context.typeof(bytesHandle) !== 'undefined';
      const bytes = withBytes ? boundedString(context, bytesHandle, SYNC_LIMITS.bytesIn) : null;
      if (name === null || args === null || (withBytes && bytes === null)) return context.newString(SYNC_TOO_LARGE);
      return context.newString(hostSync(name, args, bytes));
    });
    const timer = context.newFunction('timer', (opHandle, idHandle, delayHandle) => this.#timer(unit, opHandle, idHandle, delayHandle));
    const called = this.#slice(unit, null, () => context.callFunction(evaluated.value, context.undefined, sync, timer));
    sync.dispose();
    timer.dispose();
    evaluated.value.dispose();
    if (called.error) {
      called.error.dispose();
      return false;
    }
    called.value.dispose();
    return true;
  }

  /**
   * The timer bridge: `('set', id, delayMs)` answers a promise the host resolves after the
   * delay, `('clear', id)` forgets it. Only while an invocation runs, at most
   * TIMERS_PER_INVOCATION per invocation; the wait is wall time, and the guest's callback runs
   * in its own CPU slice, as a host call's answer does.
   */
  #timer(unit: Unit, opHandle: QuickJSHandle, idHandle: QuickJSHandle | undefined, delayHandle: QuickJSHandle | undefined) {
    const { context } = unit;
    const inv = unit.current;
    if (!inv || inv.over) throw new Error('timers can be set only while the function runs');
    const op = context.typeof(opHandle) === 'string' ? context.getString(opHandle) : '';
    const id = idHandle && context.typeof(idHandle) === 'number' ? context.getNumber(idHandle) : NaN;
    if (!Number.isSafeInteger(id)) throw new TypeError('bad timer id');
    if (op === 'clear') {
      const timer = inv.timers.get(id);
      if (timer) {
        clearTimeout(timer.handle);
        inv.timers.delete(id);
        inv.pending.delete(timer.deferred);
        timer.deferred.dispose();
      }
      return;
    }
    if (op !== 'set' || inv.timers.has(id)) throw new TypeError('bad timer call');
    if (inv.timersSet >= TIMERS_PER_INVOCATION) {
      const error = context.newError(`more than ${TIMERS_PER_INVOCATION} timers in one invocation`);
      context.setProp(error, 'code', context.newString('function_timers_limit'));
      return { error };
    }
    inv.timersSet += 1;
    const asked = delayHandle && context.typeof(delayHandle) === 'number' ? context.getNumber(delayHandle) : 0;
    const delay = asked > 0 ? Math.min(asked, MAX_TIMER_MS) : 0;
    const deferred = context.newPromise();
    inv.pending.add(deferred);
    const handle = setTimeout(() => {
      inv.timers.delete(id);
      inv.pending.delete(deferred);
      if (inv.over || !deferred.alive) return;
      deferred.resolve();
      deferred.dispose();
      this.#slice(unit, inv, () => unit.runtime.executePendingJobs());
    }, delay);
    inv.timers.set(id, { handle, deferred });
    return deferred.handle;
  }

  async #invoke(unit: Unit, inv: Invocation): Promise<{ result: string } | { failure: Failure }> {
    const { context } = unit;
    const args = [context.newString(UNIT_GLOBAL), context.newString(inv.msg.entry), context.newString(inv.msg.event)];
    const called = this.#slice(unit, inv, () => context.callFunction(unit.invoke, context.undefined, args));
    for (const arg of args) arg.dispose();
    if (called.error) {
      const failure = this.#classify(unit, called.error, 'thrown');
      called.error.dispose();
      return { failure };
    }
    // The wrapper's promise is watched from the host (its state is read by a C call that runs no
    // guest code) after every slice: a tenant that replaces Promise.prototype.then cannot reach
    // the host through it, as it could through a `then` the host attached.
    const promise = called.value;
    const settled = new Promise<Settled>((resolve) => {
      inv.afterSlice = () => {
        const state = context.getPromiseState(promise);
        if (state.type === 'pending') {
          // Stopped by the CPU deadline in a later slice (a job after a host call or a timer):
          // the promise would never settle, so the invocation ends now, not at its wall time.
          if (inv.cpuMs <= inv.msg.limits.cpuMs) return;
          inv.afterSlice = undefined;
          resolve({ overCpu: true });
          return;
        }
        inv.afterSlice = undefined;
        if (state.type === 'rejected') resolve({ error: state.error });
        else resolve(state.notAPromise ? {} : { value: state.value });
      };
    });
    this.#slice(unit, inv, () => unit.runtime.executePendingJobs());
    try {
      return await this.#settle(unit, inv, settled);
    } finally {
      inv.afterSlice = undefined;
      promise.dispose();
    }
  }

  async #settle(unit: Unit, inv: Invocation, settled: Promise<Settled>): Promise<{ result: string } | { failure: Failure }> {
    const { context } = unit;
    const { limits } = inv.msg;
    let timer: NodeJS.Timeout | undefined;
    const wall = new Promise<'wall'>((resolve) => {
      timer = setTimeout(() => resolve('wall'), limits.wallMs);
    });
    const outcome = await Promise.race([settled, wall]);
    clearTimeout(timer);
    if (outcome === 'wall') {
      // The CPU deadline ends a running slice; only a function waiting on something that never
      // comes (a promise never settled, a host call past its time) reaches the wall.
      const cpu = inv.cpuMs > limits.cpuMs;
      return {
        failure: cpu
          ? { kind: 'cpu_limit', message: `ran for more than ${limits.cpuMs} ms of CPU` }
          : { kind: 'wall_limit', message: `did not finish within ${limits.wallMs} ms` },
      };
    }
    if (outcome.overCpu) return { failure: { kind: 'cpu_limit', message: `ran for more than ${limits.cpuMs} ms of CPU` } };
    if (outcome.error) {
      const failure = this.#classify(unit, outcome.error, 'thrown');
      outcome.error.dispose();
      return { failure };
    }
    if (!outcome.value) return { failure: { kind: 'bad_result', message: 'the function did not return JSON' } };
    const text = this.#readResult(context, outcome.value, limits.resultBytes);
    outcome.value.dispose();
    return text;
  }

  /** The wrapper's answer: one string, `{"v":…}` or `{"e":…}`, read only when small enough. */
  #readResult(context: QuickJSContext, handle: QuickJSHandle, limit: number): { result: string } | { failure: Failure } {
    if (context.typeof(handle) !== 'string') return { failure: { kind: 'bad_result', message: 'the function did not return JSON' } };
    const lengthHandle = context.getProp(handle, 'length');
    const length = context.getNumber(lengthHandle);
    lengthHandle.dispose();
    // UTF-16 length: a JSON text of n code units is at most 3n bytes.
    if (length > limit + 16) return { failure: { kind: 'result_too_large', message: `the result is larger than ${limit} bytes` } };
    const text = context.getString(handle);
    if (Buffer.byteLength(text) > limit + 16) return { failure: { kind: 'result_too_large', message: `the result is larger than ${limit} bytes` } };
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return { failure: { kind: 'bad_result', message: 'the function did not return JSON' } };
    }
    if (parsed && typeof parsed === 'object' && Object.hasOwn(parsed, 'e')) return { failure: guestFailure((parsed as { e: unknown }).e) };
    if (parsed && typeof parsed === 'object' && Object.hasOwn(parsed, 'v')) return { result: JSON.stringify((parsed as { v: unknown }).v) };
    return { failure: { kind: 'bad_result', message: 'the function did not return JSON' } };
  }

  /** An error that escaped the wrapper: an engine limit (interrupt, memory, stack) or a broken wrapper. */
  #classify(unit: Unit, error: QuickJSHandle, otherwise: Failure['kind']): Failure {
    let name = '';
    let message = '';
    try {
      const dumped = unit.context.dump(error) as unknown;
      if (dumped && typeof dumped === 'object') {
        name = String((dumped as { name?: unknown }).name ?? '');
        message = String((dumped as { message?: unknown }).message ?? '');
      } else message = String(dumped);
    } catch {
      message = 'unreadable error';
    }
    return engineFailure(name, message) ?? { kind: otherwise, message: message.slice(0, 1000) };
  }
}

/**
 * Slices shorter than this are charged their wall time (an upper bound of their CPU, at most this
 * much more): most slices are, and reading the process's CPU is a system call that cost ~11 % of a
 * sandbox's CPU when read around every slice.
 */
const SLICE_WALL_MS = 1;

/** How old the CPU reading a slice starts from may be (cpuBefore): at most this much host CPU is charged to it. */
const CPU_READING_MS = 2;

/** The last reading of the process's CPU, and when. */
const cpuReading = { at: Number.NEGATIVE_INFINITY, cpu: 0 };

/** The process's CPU at a reading no older than CPU_READING_MS (read again when it is older). */
function cpuBefore(now: number): number {
  if (now - cpuReading.at > CPU_READING_MS) {
    cpuReading.cpu = cpuNow();
    cpuReading.at = now;
  }
  return cpuReading.cpu;
}

/**
 * The CPU the current slice has spent, in ms: its wall time while it is short; past
 * SLICE_WALL_MS, no more than the process's CPU since a reading taken before the slice (a
 * process that waited for a core, or was stopped, spent wall time but no CPU: a busy machine
 * must not use up a function's budget), and once the interpreter's poll marks it (`mark`), that
 * much plus the process's CPU since the mark.
 */
function sliceSpent(unit: Unit, mark: boolean): number {
  if (unit.sliceCpuMark === null) {
    const wall = performance.now() - unit.sliceWallStart;
    if (wall < SLICE_WALL_MS) return wall;
    const cpu = cpuNow();
    const charged = Math.min(wall, cpu - unit.sliceCpuBase);
    if (!mark) return charged;
    unit.sliceCpuMark = cpu;
    unit.sliceChargedAtMark = charged;
  }
  return unit.sliceChargedAtMark + (cpuNow() - unit.sliceCpuMark);
}

/**
 * CPU time of this process in milliseconds. A slice of guest code runs synchronously, one at a
 * time, so the process's CPU during a slice is that invocation's: a busy machine slows a function
 * down but does not use up its budget (wall time would).
 */
function cpuNow(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Timers one invocation may set (each setInterval tick is one). */
const TIMERS_PER_INVOCATION = 1000;
/** Node's own ceiling for a timer; the invocation's wall time ends any timer long before. */
const MAX_TIMER_MS = 2 ** 31 - 1;
const SYNC_TOO_LARGE = JSON.stringify({ e: { name: 'RangeError', message: 'the arguments are not strings, or too large' } });

/** A guest string, copied out only when it is at most `max` characters long; otherwise null. */
function boundedString(context: QuickJSContext, handle: QuickJSHandle | undefined, max: number): string | null {
  if (!handle || context.typeof(handle) !== 'string') return null;
  const length = context.getProp(handle, 'length').consume((h) => context.getNumber(h));
  return length <= max ? context.getString(handle) : null;
}

const LEVELS = new Set(['log', 'info', 'warn', 'error', 'debug']);

function engineFailure(name: string, message: string): Failure | null {
  if (message === 'interrupted') return { kind: 'cpu_limit', message: 'ran past its CPU time' };
  if (message === 'out of memory' || (name === '' && message === '')) return { kind: 'memory_limit', message: 'ran out of memory' };
  if (message === 'stack overflow' || message === 'Maximum call stack size exceeded') return { kind: 'stack_limit', message: 'recursion too deep' };
  return null;
}

/** What the wrapper reported: the function's own error, or an engine limit it caught and passed on. */
function guestFailure(e: unknown): Failure {
  const o = (e && typeof e === 'object' ? e : {}) as Record<string, unknown>;
  const name = typeof o.name === 'string' ? o.name : 'Error';
  const message = typeof o.message === 'string' ? o.message.slice(0, 1000) : 'the function failed';
  if (name === 'NoEntry') return { kind: 'no_entry', message };
  if (name === 'BadResult') return { kind: 'bad_result', message };
  const engine = engineFailure(name, message);
  if (engine) return engine;
  return { kind: 'thrown', message, status: o.status, code: o.code };
}
