/**
 * The messages between the API process (pool.ts) and a sandbox process (child.ts). Values cross
 * as structured clones; everything the guest produced arrives as a string the parent parses and
 * bounds itself: a sandbox process is treated as hostile once it has run tenant code.
 */

/** Per-invocation limits, enforced inside the sandbox process and again by the pool's watchdog. */
export interface InvocationLimits {
  /** CPU time the guest may spend running (host calls and waits excluded). */
  cpuMs: number;
  /** Wall time from start to answer, host calls included. */
  wallMs: number;
  /** Bytes of console output kept; the rest is dropped and counted. */
  logBytes: number;
  /** Bytes of the JSON the function returns. */
  resultBytes: number;
  /** Host calls (data, mail, fetch) one invocation may make. */
  hostCalls: number;
}

export interface InvokeMessage {
  t: 'invoke';
  id: number;
  /** The compiled unit: one per project and code version (its content hash). */
  unit: string;
  /** Present when the parent believes the sandbox does not hold the unit yet. */
  source?: string;
  /** The exported function to call. */
  entry: string;
  /** JSON text of `{event, env, caller}`: the function's argument and its `plinth.env` and `plinth.caller`. */
  event: string;
  limits: InvocationLimits;
  /** Ceiling of the unit's WebAssembly memory, in MiB: a hard cap (the memory cannot grow past it). */
  memoryMb: number;
}

export interface HostResultMessage {
  t: 'host-result';
  id: number;
  call: number;
  /** JSON text: {"value": …} or {"error": {"code", "message", "status"}}. */
  body: string;
}

export type ToSandbox = InvokeMessage | HostResultMessage;

/**
 * What crosses the channel: one message, or several sent in the same turn of the event loop as
 * one write (`{t: 'batch'}`). Under load a sandbox has several invocations in flight, and each
 * IPC write is a system call on both sides (outbox.ts).
 */
export interface Batch<T> {
  t: 'batch';
  msgs: T[];
}

export interface HostCallMessage {
  t: 'host-call';
  id: number;
  call: number;
  name: string;
  /** JSON text of the arguments, as the guest sent them (untrusted). */
  args: string;
}

export type FailureKind =
  | 'thrown' // the function threw or rejected: its own error
  | 'cpu_limit' // ran past its CPU time
  | 'wall_limit' // did not answer within its wall time (e.g. a promise that never settles)
  | 'memory_limit' // its unit's memory is exhausted
  | 'stack_limit' // recursion too deep
  | 'result_too_large'
  | 'bad_result' // returned something that is not JSON
  | 'compile' // the source does not evaluate
  | 'no_entry' // the unit has no such export
  | 'host_calls_limit'
  | 'crashed'; // the sandbox process died or was killed

export interface Failure {
  kind: FailureKind;
  message: string;
  /** For `thrown`: what the function attached to its error (validated by the parent). */
  status?: unknown;
  code?: unknown;
}

export interface DoneMessage {
  t: 'done';
  id: number;
  /** JSON text of the value, or a failure. */
  result?: string;
  failure?: Failure;
  logs: LogLine[];
  logsDropped: number;
  cpuMs: number;
  /** The sandbox process's resident set after the invocation, in bytes (for recycling); 0 when not read this time. */
  rss: number;
}

export interface LogLine {
  level: 'log' | 'info' | 'warn' | 'error' | 'debug';
  text: string;
  at: number;
}

export type FromSandbox = HostCallMessage | DoneMessage | { t: 'need-source'; id: number } | { t: 'ready' };
