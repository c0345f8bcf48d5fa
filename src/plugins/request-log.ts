/**
 * Request logging. One line when a request completes (method, URL, status, time, with the
 * request id and, once known, the project id); JSON logs also keep Fastify's "incoming request"
 * line (a request that hangs still shows up), the pretty terminal drops it.
 *
 * The project id is bound in one place, `bindProjectLog`: the API-key check calls it with the
 * project the key resolved to, and the dashboard's project routes with the `:projectId` they
 * name. Every later line of the request (handlers, errors, completion) then carries it.
 */
import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';
import type { LogFormat } from '../config.js';
import { isObjectId } from '../lib/ids.js';

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

const bound = new WeakSet<FastifyRequest>();

/** From here on, this request's log lines (and its reply's) carry `projectId`. */
export function bindProjectLog(req: FastifyRequest, reply: FastifyReply, projectId: string): void {
  if (bound.has(req)) return;
  bound.add(req);
  const log = req.log.child({ projectId }) as FastifyBaseLogger;
  req.log = log;
  reply.log = log;
}

/** Dashboard routes under /api/projects/:projectId are scoped to the project they name. */
export async function bindProjectParam(req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const projectId = (req.params as { projectId?: unknown } | undefined)?.projectId;
  if (typeof projectId === 'string' && isObjectId(projectId)) bindProjectLog(req, reply, projectId);
}
