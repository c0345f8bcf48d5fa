/**
 * The per-request logger Fastify gets from requestLoggerFactory: it defers making the pino child
 * until a line is written, so it must write exactly what a child would have written (the
 * request id, later bindings such as the project, redaction) and nothing below the level.
 */
import { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/lib/logger.js';
import { requestLoggerFactory } from '../../src/plugins/request-log.js';

function capture(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { root: createLogger(level, stream, 'json') as unknown as FastifyBaseLogger, lines };
}

describe('request logger', () => {
  it('writes nothing below the level, and a later warning carries the request id and the project bound before it', () => {
    const { root, lines } = capture('warn');
    const log = requestLoggerFactory(root, { reqId: 'r-1' }, {}) as FastifyBaseLogger & { setBindings(b: object): void };
    log.info('request completed');
    log.debug({ x: 1 }, 'detail');
    log.setBindings({ projectId: 'p-1' });
    log.warn({ provider: 'github' }, 'social sign-in failed');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ reqId: 'r-1', projectId: 'p-1', provider: 'github', msg: 'social sign-in failed', level: 40 });
  });

  it('keeps bindings added after its first line, and redacts secrets like any pino logger', () => {
    const { root, lines } = capture('info');
    const log = requestLoggerFactory(root, { reqId: 'r-2' }, {}) as FastifyBaseLogger & { setBindings(b: object): void };
    log.info('incoming request');
    log.setBindings({ projectId: 'p-2' });
    log.error({ body: { password: 'hunter2' } }, 'failed');
    expect(lines.map((l) => [l.reqId, l.projectId, l.msg])).toEqual([['r-2', undefined, 'incoming request'], ['r-2', 'p-2', 'failed']]);
    expect(JSON.stringify(lines)).not.toContain('hunter2');
  });

  it('follows a level set on it, and a route with its own log options gets a real child', () => {
    const { root, lines } = capture('warn');
    const log = requestLoggerFactory(root, { reqId: 'r-3' }, {});
    log.level = 'debug';
    log.debug('now visible');
    const routeLog = requestLoggerFactory(root, { reqId: 'r-4' }, { level: 'info' });
    routeLog.info('route line');
    expect(lines.map((l) => [l.reqId, l.msg])).toEqual([['r-3', 'now visible'], ['r-4', 'route line']]);
  });
});
