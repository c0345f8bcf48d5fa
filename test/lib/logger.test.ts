import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/lib/logger.js';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { log: createLogger('info', stream), text: () => lines.join('') };
}

describe('logger redaction', () => {
  it('redacts secret fields at the top level, nested, and in child bindings', () => {
    const { log, text } = capture();
    log.info({ password: 'SECRET-TOP', token: 'SECRET-TOKEN', body: { apiKey: 'SECRET-NESTED' } }, 'event');
    log.child({ refreshToken: 'SECRET-CHILD' }).info('child event');
    log.error({ err: Object.assign(new Error('boom'), { secretKey: 'SECRET-ERR' }) }, 'failure');
    const out = text();
    expect(out).not.toMatch(/SECRET-/);
    expect(out).toContain('[REDACTED]');
    expect(out).toContain('boom');
  });

  it('masks key query parameters in logged request URLs', () => {
    const { log, text } = capture();
    log.info({ req: { id: '1', method: 'GET', url: '/api/x?key=pk_live_abc&y=1' } }, 'request');
    expect(text()).toContain('/api/x?key=[REDACTED]&y=1');
  });
});

describe('pretty format', () => {
  it('prints an error with its stack under its line', () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const log = createLogger('info', stream, 'pretty');
    log.error({ err: new Error('disk on fire') }, 'request failed');
    const out = lines.join('');
    expect(out).toMatch(/ERROR: request failed/);
    expect(out).toContain('disk on fire');
    expect(out).toMatch(/at .*logger\.test\.ts/);
  });

  it("leaves Fastify's 'Server listening at' line to the start-up banner", () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const log = createLogger('info', stream, 'pretty');
    log.info('Server listening at http://127.0.0.1:3000');
    log.info('something else');
    expect(lines.join('')).not.toContain('Server listening');
    expect(lines.join('')).toContain('something else');
  });
});
