/**
 * Bug (issue 46, item 4): errors Fastify answers before any route or error handler ran were not
 * the envelope docs/errors.md promises: `PATCH /api/storage/tus/%%%` answered Fastify's own
 * `{"error":"Bad Request","code":"FST_ERR_BAD_URL",…}`, a 3 000-character path parameter
 * `414 FST_ERR_MAX_PARAM_LENGTH`, a malformed HTTP request Fastify's plain JSON. Every route of
 * the route table with a path parameter is called with a bad percent-encoding and an over-long
 * value in each parameter; body-parsing failures and malformed HTTP are checked too. Each answer
 * is the envelope with a catalogue code and its status, never a 5xx.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../helpers/context.js';
import { makeCollection, makeProject, type TestProject } from '../helpers/fixtures.js';
import { routesOf } from '../../src/plugins/route-table.js';
import { errorCatalogue } from '../../src/lib/errors.js';
import { loadCatalogue } from '../../scripts/errors-doc.js';

let env: TestEnv;
let p: TestProject;
let statusOf: Map<string, number>;

beforeAll(async () => {
  env = await createTestEnv({ RATE_LIMIT_SCALE: '0' });
  p = await makeProject(env.ctx);
  await makeCollection(env.ctx, p.id, 'notes', [{ key: 'n', type: 'Number' }]);
  await loadCatalogue();
  statusOf = new Map(errorCatalogue().map((e) => [e.code, e.status]));
});
afterAll(() => env.close());

interface Answer {
  status: number;
  body: string;
  headers: Record<string, unknown>;
}

/** The problems with an error answer: not the envelope, a code outside the catalogue, a 5xx. */
function problems(res: Answer, method: string, expected?: { code: string; status: number }): string[] {
  const out: string[] = [];
  if (res.status >= 500) out.push(`answered ${res.status}`);
  if (expected && res.status !== expected.status) out.push(`status ${res.status}, expected ${expected.status}`);
  if (method === 'HEAD') return out;
  let b: Record<string, unknown> = {};
  try {
    b = JSON.parse(res.body);
  } catch {
    out.push(`not JSON: ${res.body.slice(0, 100)}`);
    return out;
  }
  if (b.success !== false || typeof b.message !== 'string' || typeof b.code !== 'string' || JSON.stringify(b.data) !== '{}') {
    out.push(`not the envelope: ${res.body.slice(0, 140)}`);
    return out;
  }
  const code = b.code as string;
  if (statusOf.get(code) !== res.status) out.push(`code '${code}' with ${res.status}: the catalogue says ${statusOf.get(code) ?? 'nothing'}`);
  if (expected && code !== expected.code) out.push(`code '${code}', expected '${expected.code}'`);
  return out;
}

const inject = async (method: string, url: string, opts: { headers?: Record<string, string>; payload?: string } = {}): Promise<Answer> => {
  const res = await env.app.inject({ method: method as 'GET', url, headers: opts.headers, payload: opts.payload });
  return { status: res.statusCode, body: res.body, headers: res.headers };
};

/** Every (method, URL pattern) with a path parameter (`:name` or a wildcard). */
const parametric = () => routesOf(env.app).filter((r) => /[:*]/.test(r.url));

/** The URL with `value` in parameter number `which` and a harmless value in the others. */
function fill(url: string, which: number, value: string): string {
  let i = 0;
  return url.replace(/:[^/]+|\*/g, () => (i++ === which ? value : 'notes'));
}

const paramCount = (url: string) => (url.match(/:[^/]+|\*/g) ?? []).length;

describe('errors Fastify answers before any route are the envelope', () => {
  it('a bad percent-encoding in any path parameter of any route: 400 invalid_url', async () => {
    const routes = parametric();
    expect(routes.length).toBeGreaterThan(40);
    expect(routes.some((r) => r.url.startsWith('/api/storage/tus/'))).toBe(true);
    const failures: string[] = [];
    for (const { method, url } of routes) {
      for (let i = 0; i < paramCount(url); i++) {
        for (const bad of ['%%%', '%E0%A4%A', 'a%zz']) {
          const path = fill(url, i, bad);
          const res = await inject(method, path, { headers: { ...p.sk, 'tus-resumable': '1.0.0' } });
          for (const problem of problems(res, method, { code: 'invalid_url', status: 400 })) failures.push(`${method} ${path}: ${problem}`);
          if (res.headers['x-request-id'] === undefined) failures.push(`${method} ${path}: no x-request-id`);
        }
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it('an over-long value in any path parameter of any route: 414 path_parameter_too_long', async () => {
    const routes = parametric();
    // The router gives up on a parameter over its length only when no other route of the
    // method takes the path: a wildcard (`/api/data/*`) then answers, in the envelope too.
    const wildcards = routes.filter((r) => r.url.endsWith('*')).map((r) => ({ method: r.method, prefix: r.url.slice(0, -1) }));
    const failures: string[] = [];
    for (const { method, url } of routes) {
      for (let i = 0; i < paramCount(url); i++) {
        const path = fill(url, i, 'a'.repeat(3000));
        const res = await inject(method, path, { headers: { ...p.sk, 'tus-resumable': '1.0.0' } });
        // A route's own wildcard takes any length (`/api/functions/:name/*`): no parameter limit there.
        const ownWildcard = url.endsWith('*') && i === paramCount(url) - 1;
        const caught = ownWildcard || wildcards.some((w) => w.method === method && path.startsWith(w.prefix));
        if (caught) {
          if (res.status >= 400) for (const problem of problems(res, method)) failures.push(`${method} ${url} (parameter ${i}): ${problem}`);
          else if (!url.endsWith('*')) failures.push(`${method} ${url} (parameter ${i}): answered ${res.status}`);
          continue;
        }
        for (const problem of problems(res, method, { code: 'path_parameter_too_long', status: 414 })) failures.push(`${method} ${url} (parameter ${i}): ${problem}`);
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it('PATCH /api/storage/tus/%%% and a 3 000-character tus id: the envelope (the issue\'s examples)', async () => {
    const headers = { ...p.sk, 'tus-resumable': '1.0.0', 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' };
    const bad = await inject('PATCH', '/api/storage/tus/%%%', { headers, payload: 'abc' });
    expect(problems(bad, 'PATCH', { code: 'invalid_url', status: 400 })).toEqual([]);
    const long = await inject('PATCH', `/api/storage/tus/${'A'.repeat(3000)}`, { headers, payload: 'abc' });
    expect(problems(long, 'PATCH', { code: 'path_parameter_too_long', status: 414 })).toEqual([]);
  });

  it('a parameter as long as a tus upload id (600 characters) reaches its route', async () => {
    const res = await inject('HEAD', `/api/storage/tus/${'A'.repeat(600)}`, { headers: { ...p.sk, 'tus-resumable': '1.0.0' } });
    expect(res.status).not.toBe(414);
    const doc = await inject('GET', `/api/data/notes/${'f'.repeat(600)}`, { headers: p.sk });
    expect(problems(doc, 'GET')).toEqual([]);
    expect(doc.status).not.toBe(414);
  });
});

describe('body-parsing failures are the envelope', () => {
  const url = '/api/data/notes';
  const json = { 'content-type': 'application/json' };
  const cases: Array<[string, Record<string, string>, string | undefined, { code: string; status: number }]> = [
    ['an unsupported content type', { 'content-type': 'application/xml' }, '<n>1</n>', { code: 'unsupported_media_type', status: 415 }],
    ['a malformed content type', { 'content-type': '/json;;' }, '{}', { code: 'unsupported_media_type', status: 415 }],
    ['a content type with no subtype', { 'content-type': 'application' }, '{}', { code: 'unsupported_media_type', status: 415 }],
    ['an empty JSON body', json, '', { code: 'invalid_json', status: 400 }],
    ['invalid JSON', json, '{"n":', { code: 'invalid_json', status: 400 }],
    ['a prototype-poisoning key', json, '{"__proto__":{"x":1}}', { code: 'invalid_json', status: 400 }],
    ['a body over BODY_LIMIT', json, `{"a":"${'x'.repeat(2 * 1024 * 1024)}"}`, { code: 'payload_too_large', status: 413 }],
  ];
  for (const [name, headers, payload, expected] of cases) {
    it(`${name}: ${expected.status} ${expected.code}`, async () => {
      const res = await inject('POST', url, { headers: { ...p.sk, ...headers }, payload });
      expect(problems(res, 'POST', expected)).toEqual([]);
    });
  }

  it('a DELETE with a JSON content type and no body (a wrapper that sets it on every request) deletes the document', async () => {
    const made = await inject('POST', url, { headers: { ...p.sk, ...json }, payload: '{"n":1}' });
    expect(made.status).toBe(201);
    const id = (JSON.parse(made.body) as { _id: string })._id;
    const res = await inject('DELETE', `${url}/${id}`, { headers: { ...p.sk, ...json }, payload: '' });
    expect(res.status).toBe(200);
    expect((await inject('GET', `${url}/${id}`, { headers: p.sk })).status).toBe(404);
  });

  it('a declared body longer than the bytes sent: 400 in the envelope', async () => {
    await env.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (env.app.server.address() as net.AddressInfo).port;
    const head = `POST ${url} HTTP/1.1\r\nhost: x\r\nx-api-key: ${p.sk['x-api-key']}\r\ncontent-type: application/json\r\ncontent-length: 20\r\n\r\n{}`;
    const answer = await rawExchange(port, head, { halfClose: true });
    expect(answer).toMatch(/^HTTP\/1\.1 4\d\d /);
    expect(problems(parseRaw(answer), 'POST')).toEqual([]);
  });
});

function rawExchange(port: number, text: string, opts: { halfClose?: boolean } = {}): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let got = '';
    socket.on('data', (d) => (got += d.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => resolve(got));
    socket.write(text, () => {
      if (opts.halfClose) socket.end();
    });
    setTimeout(() => socket.destroy(), 5_000);
  });
}

function parseRaw(text: string): Answer {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
  const [head, ...rest] = text.split('\r\n\r\n');
  const headers = Object.fromEntries((head ?? '').split('\r\n').slice(1).map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  return { status, headers, body: rest.join('\r\n\r\n') };
}

describe('malformed HTTP is answered with the envelope', () => {
  let port: number;
  beforeAll(async () => {
    if (!env.app.server.listening) await env.app.listen({ host: '127.0.0.1', port: 0 });
    port = (env.app.server.address() as net.AddressInfo).port;
  });

  it('a request line that is not HTTP: 400 bad_request', async () => {
    const res = parseRaw(await rawExchange(port, 'GARBAGE / NOT-HTTP\r\n\r\n'));
    expect(problems(res, 'GET', { code: 'bad_request', status: 400 })).toEqual([]);
  });

  it('headers over the size limit: 431 headers_too_large', async () => {
    const res = parseRaw(await rawExchange(port, `GET /api/health HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(64 * 1024)}\r\n\r\n`));
    expect(problems(res, 'GET', { code: 'headers_too_large', status: 431 })).toEqual([]);
  });
});
