/**
 * A request answered before its body was read to the end (a 413 over BODY_LIMIT, a 415, a 401
 * from an auth group, a bad URL) keeps its connection while the client finishes sending, up to
 * a bound; then it is cut.
 *
 * Why: closing a socket whose peer is still sending makes the kernel answer with a reset, and
 * a client still writing sees EPIPE or ECONNRESET, often before it has read the answer (browsers
 * report a network error instead of "413 too large"). Fastify asks for exactly that on every
 * body-parser error (`Connection: close`; the error handler, src/plugins/errors.ts, drops it),
 * and Node's HTTP server would otherwise discard the rest of an unread body without any bound.
 *
 * So, once the answer is flushed, the rest of the body is read and discarded; when it ends
 * the connection serves its next request as usual (Node's parser frames bodies, Content-Length
 * or chunked, so nothing of this body is taken for the next request). Past `bytes` more bytes or
 * `ms` milliseconds, whichever comes first, the socket is destroyed: a client sending forever
 * holds a connection for a bounded time and is read a bounded number of bytes. Shutdown
 * (`app.close()`) cuts the connections still draining.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

export interface DrainBound {
  /** Body bytes read and discarded after the answer, at most. */
  bytes: number;
  /** Milliseconds after the answer a body may go on arriving, at most. */
  ms: number;
}

const MIB = 1024 * 1024;

/** The bound for a BODY_LIMIT: four times the limit, at least 4 MiB; 10 seconds. */
export function drainBoundFor(bodyLimit: number): DrainBound {
  return { bytes: Math.max(4 * MIB, 4 * bodyLimit), ms: 10_000 };
}

export function registerBodyDrain(app: FastifyInstance, bound: DrainBound): void {
  const draining = new Set<Socket>();

  function drain(req: IncomingMessage): void {
    const socket = req.socket;
    if (!socket || socket.destroyed || draining.has(socket)) return;
    draining.add(socket);
    let read = 0;
    const cut = () => {
      finish();
      socket.destroy();
    };
    const onData = (chunk: Buffer) => {
      read += chunk.length;
      if (read > bound.bytes) cut();
    };
    const timer = setTimeout(cut, bound.ms);
    timer.unref();
    function finish() {
      clearTimeout(timer);
      draining.delete(socket);
      req.removeListener('data', onData);
      req.removeListener('end', finish);
      req.removeListener('error', finish);
      socket.removeListener('close', finish);
    }
    req.on('data', onData);
    req.once('end', finish);
    req.once('error', finish);
    socket.once('close', finish);
    req.resume();
  }

  // On the raw server: every answer passes here, including those Fastify writes before any
  // route or hook runs (frameworkErrors). Node's own 'finish' listener has already run.
  function onFinish(this: ServerResponse): void {
    const req = this.req;
    if (req && !req.complete) drain(req);
  }
  app.server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
    res.once('finish', onFinish);
  });

  app.addHook('preClose', (done) => {
    for (const socket of draining) socket.destroy();
    draining.clear();
    done();
  });
}
