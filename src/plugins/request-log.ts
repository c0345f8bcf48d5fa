/**
 * Request logging. One line when a request completes (method, URL, status, time, with the
 * request id and, once known, the project id); JSON logs also keep Fastify's "incoming request"
 * line (a request that hangs still shows up), the pretty terminal drops it.
 *
 * The project id is bound in one place, `bindProjectLog`: the API-key check calls it with the
 * project the key resolved to, and the dashboard's project routes with the `:projectId` they
 * name. Every later line of the request (handlers, errors, completion) then carries it.
 *
 * A request's logger is made only when the request writes a line (RequestLogger).
 */
import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Bindings, ChildLoggerOptions, Logger } from 'pino';
import type { LogFormat } from '../config.js';
import { isObjectId } from '../lib/ids.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The project id this request's log lines carry, once bound (bindProjectLog). */
    logProjectId?: string;
  }
}

class RequestLogController extends LogController {
  constructor(private readonly format: LogFormat) {
    super();
  }

  override incomingRequest(request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    if (this.format === 'json') super.incomingRequest(request, reply, metadata);
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = { req: request, res: reply, responseTime: reply.elapsedTime };
    if (error) request.log.error({ ...line, err: error }, 'request errored');
    else request.log.info(line, 'request completed');
  }
}

export function requestLogController(format: LogFormat): LogController {
  return new RequestLogController(format);
}

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type LogArgs = Parameters<Logger['info']>;

/**
 * A request's logger (Fastify's `childLoggerFactory`): the pino child with the request's
 * bindings is made on the first line the request writes at an enabled level, not for every
 * request. Making a child runs its bindings through the redaction paths and rebuilds its level
 * methods: ~4 % of a get's CPU at LOG_LEVEL=warn, where most requests write nothing. Fastify
 * validates what the factory returns (the level methods and `child`).
 */
export class RequestLogger {
  #child: Logger | undefined;
  #bindings: Bindings;

  constructor(
    private readonly parent: Logger,
    bindings: Bindings,
  ) {
    this.#bindings = bindings;
  }

  private logger(): Logger {
    return (this.#child ??= this.parent.child(this.#bindings));
  }

  get level(): string {
    return (this.#child ?? this.parent).level;
  }

  set level(level: string) {
    this.logger().level = level;
  }

  isLevelEnabled(level: string): boolean {
    return (this.#child ?? this.parent).isLevelEnabled(level);
  }

  private write(level: Level, args: LogArgs): void {
    if (this.isLevelEnabled(level)) this.logger()[level](...args);
  }

  fatal(...args: LogArgs): void { this.write('fatal', args); }
  error(...args: LogArgs): void { this.write('error', args); }
  warn(...args: LogArgs): void { this.write('warn', args); }
  info(...args: LogArgs): void { this.write('info', args); }
  debug(...args: LogArgs): void { this.write('debug', args); }
  trace(...args: LogArgs): void { this.write('trace', args); }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.logger().child(bindings, options);
  }

  bindings(): Bindings {
    return this.#child ? this.#child.bindings() : { ...this.parent.bindings(), ...this.#bindings };
  }

  /** Adds to the bindings of every later line (pino's setBindings). */
  setBindings(bindings: Bindings): void {
    if (this.#child) this.#child.setBindings(bindings);
    else this.#bindings = { ...this.#bindings, ...bindings };
  }
}

/** Fastify's childLoggerFactory: a route with its own log options gets a real child at once. */
export function requestLoggerFactory(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  if (Object.keys(options).length > 0) return logger.child(bindings, options);
  return new RequestLogger(logger as unknown as Logger, bindings) as unknown as FastifyBaseLogger;
}

/**
 * From here on, this request's log lines (and its reply's) carry `projectId`. Marked on the
 * request itself (a decorated field), not in a WeakSet: a weak collection's table lives in V8's
 * old space, so an entry per request filled it and brought full garbage collections sooner.
 */
export function bindProjectLog(req: FastifyRequest, reply: FastifyReply, projectId: string): void {
  if (req.logProjectId !== undefined) return;
  req.logProjectId = projectId;
  // Fastify gives every request its own logger (req.log, shared by its reply): the binding is
  // added to it rather than made a second child, which every API-key request paid for.
  const log = req.log as FastifyBaseLogger & { setBindings?: (bindings: Bindings) => void };
  if (typeof log.setBindings === 'function' && reply.log === req.log) return log.setBindings({ projectId });
  req.log = reply.log = req.log.child({ projectId });
}

/** Dashboard routes under /api/projects/:projectId are scoped to the project they name. */
export function bindProjectParam(req: FastifyRequest, reply: FastifyReply, done: () => void): void {
  const projectId = (req.params as { projectId?: unknown } | undefined)?.projectId;
  if (typeof projectId === 'string' && isObjectId(projectId)) bindProjectLog(req, reply, projectId);
  done();
}
