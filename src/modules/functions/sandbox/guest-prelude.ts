/**
 * JavaScript run in every unit's context before the tenant's code (engine.ts). It takes the three
 * host functions off the global object (the tenant's code never sees them), captures JSON before
 * the tenant can replace it, and defines `console` and the invoke wrapper the host calls. The
 * wrapper always answers one JSON text, `{"v": value}` or `{"e": {...}}`, so the host never walks
 * a guest object: it reads one bounded string.
 */
export const GUEST_PRELUDE = String.raw`(function () {
  'use strict';
  const g = globalThis;
  const hostCall = g.__plinthHostCall, hostLog = g.__plinthLog;
  delete g.__plinthHostCall;
  delete g.__plinthLog;
  const stringify = JSON.stringify, parse = JSON.parse, hasOwn = Object.prototype.hasOwnProperty;
  const freeze = Object.freeze;

  class PlinthError extends Error {
    constructor(message, options) {
      super(String(message));
      this.name = 'PlinthError';
      if (options && typeof options === 'object') {
        if (options.status !== undefined) this.status = options.status;
        if (options.code !== undefined) this.code = options.code;
      }
    }
  }

  async function call(name, args) {
    const text = await hostCall(String(name), stringify(args === undefined ? null : args));
    const body = parse(text);
    if (body.error) throw new PlinthError(body.error.message, body.error);
    return body.value;
  }

  function show(value) {
    if (typeof value === 'string') return value;
    if (value instanceof Error) return value.stack ? value.name + ': ' + value.message + '\n' + value.stack : String(value);
    try {
      const text = stringify(value);
      return text === undefined ? String(value) : text;
    } catch (err) {
      return String(value);
    }
  }
  const logger = (level) => (...args) => { hostLog(level, args.map(show).join(' ')); };
  g.console = freeze({ log: logger('log'), info: logger('info'), warn: logger('warn'), error: logger('error'), debug: logger('debug') });
  g.PlinthError = PlinthError;

  function failure(err) {
    if (err && typeof err === 'object') {
      return { name: String(err.name || 'Error'), message: String(err.message === undefined ? err : err.message), status: err.status, code: err.code };
    }
    return { name: 'Error', message: String(err) };
  }

  function collection(mode, name) {
    const op = (o, args) => call('data', Object.assign({ mode, collection: String(name), op: o }, args));
    return freeze({
      get: (id, query) => op('get', { id: String(id), query: query || {} }),
      list: (query) => op('list', { query: query || {} }),
      count: async (query) => (await op('count', { query: query || {} })).count,
      create: (data) => op('create', { data }),
      update: (id, data) => op('update', { id: String(id), data }),
      delete: (id, options) => op('delete', { id: String(id), hard: !!(options && options.hard) }),
      restore: (id) => op('restore', { id: String(id) }),
    });
  }
  const dataApi = (mode) => freeze({ collection: (name) => collection(mode, name) });
  const data = freeze(Object.assign({ service: dataApi('service') }, dataApi('caller')));

  class FetchResponse {
    constructor(r) {
      this.status = r.status;
      this.statusText = r.statusText || '';
      this.ok = r.status >= 200 && r.status < 300;
      const headers = r.headers || {};
      this.headers = freeze({ get: (k) => (hasOwn.call(headers, String(k).toLowerCase()) ? headers[String(k).toLowerCase()] : null), entries: () => Object.entries(headers) });
      const body = r.body;
      this.text = async () => body;
      this.json = async () => parse(body);
    }
  }
  async function plinthFetch(url, init) {
    const i = init || {};
    const headers = {};
    const h = i.headers || {};
    for (const k of Object.keys(h)) headers[k] = String(h[k]);
    const body = i.body === undefined || i.body === null ? undefined : typeof i.body === 'string' ? i.body : stringify(i.body);
    return new FetchResponse(await call('fetch', { url: String(url), method: i.method ? String(i.method) : 'GET', headers, body }));
  }
  g.fetch = plinthFetch;

  // plinth.mail: one message per send, queued as POST /api/mail/send queues it (host.ts); the
  // answer is that route's data, {id, provider, monthlyUsage, monthlyLimit, templateUsed?}.
  const mail = freeze({
    send: (message, options) => call('mail', { message, idempotencyKey: options && typeof options === 'object' ? options.idempotencyKey : undefined }),
  });

  /** An HTTP function's answer with its own status and headers (a plain value is JSON with 200). */
  function response(body, init) {
    const i = init || {};
    return { __plinthResponse: true, status: i.status === undefined ? 200 : i.status, headers: i.headers || {}, body: body === undefined ? null : body, bodyEncoding: i.bodyEncoding };
  }

  function plinthFor(payload) {
    return freeze({
      data,
      mail,
      fetch: plinthFetch,
      response,
      env: freeze(Object.assign({}, payload.env)),
      caller: freeze(Object.assign({}, payload.caller)),
    });
  }

  return async function invoke(unit, entry, payloadText) {
    try {
      const exports = g[unit];
      const fn = exports && hasOwn.call(exports, entry) ? exports[entry] : undefined;
      if (typeof fn !== 'function') return stringify({ e: { name: 'NoEntry', message: 'no exported function ' + entry } });
      const payload = parse(payloadText);
      const out = await fn(payload.event, plinthFor(payload));
      const text = stringify({ v: out === undefined ? null : out });
      return text === undefined ? stringify({ e: { name: 'BadResult', message: 'the result is not JSON' } }) : text;
    } catch (err) {
      return stringify({ e: failure(err) });
    }
  };
})()`;

/** The global the unit's bundle assigns its exports to (esbuild `globalName`). */
export const UNIT_GLOBAL = '__plinthUnit';
