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

  const api = freeze({ call });
  return async function invoke(unit, entry, eventText) {
    try {
      const exports = g[unit];
      const fn = exports && hasOwn.call(exports, entry) ? exports[entry] : undefined;
      if (typeof fn !== 'function') return stringify({ e: { name: 'NoEntry', message: 'no exported function ' + entry } });
      const out = await fn(parse(eventText), api);
      const text = stringify({ v: out === undefined ? null : out });
      return text === undefined ? stringify({ e: { name: 'BadResult', message: 'the result is not JSON' } }) : text;
    } catch (err) {
      return stringify({ e: failure(err) });
    }
  };
})()`;

/** The global the unit's bundle assigns its exports to (esbuild `globalName`). */
export const UNIT_GLOBAL = '__plinthUnit';
