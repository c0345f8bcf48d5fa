/**
 * The Web standards inside the sandbox (guest-stdlib.ts, host-sync.ts, the timer bridge in
 * engine.ts), run in the real pool of sandbox processes. Where Node has the same standard, the
 * same code runs here in Node too and the answers must agree; then the hostile cases: huge
 * inputs, wrong types, a guest that replaces built-ins first, timers after the end, a flood.
 */
import { createHash, createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxPool, type InvokeRequest } from '../../../src/modules/functions/sandbox/pool.js';
import { SANDBOX_SCRIPT } from '../../../src/paths.js';

const LIMITS = { cpuMs: 1000, wallMs: 3000, logBytes: 8192, resultBytes: 256 * 1024, hostCalls: 20 };
let pool: SandboxPool;

beforeAll(() => {
  pool = new SandboxPool({
    script: SANDBOX_SCRIPT,
    size: 2,
    perProjectConcurrency: 2,
    perProjectQueue: 8,
    memoryMb: 64,
    processRssMb: 400,
    heapMb: 96,
    graceMs: 1000,
  });
});
afterAll(() => pool.close());

let units = 0;
function unitSource(body: string): string {
  return `var __plinthUnit = { handler: async (event, plinth) => { ${body} } };`;
}
function run(body: string, extra: Partial<InvokeRequest> = {}) {
  const source = unitSource(body);
  return pool.invoke({
    project: 'web',
    unit: `web:${++units}`,
    source: async () => source,
    entry: 'handler',
    event: null,
    limits: LIMITS,
    host: async () => ({ value: null }),
    ...extra,
  });
}
async function guest(body: string): Promise<unknown> {
  const out = await run(body);
  if (!out.ok) throw new Error(`${out.failure.kind}: ${out.failure.message}`);
  return out.value;
}
async function guestWith(limits: typeof LIMITS, body: string): Promise<unknown> {
  const out = await run(body, { limits });
  if (!out.ok) throw new Error(`${out.failure.kind}: ${out.failure.message}`);
  return out.value;
}
const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (...args: string[]) => () => Promise<unknown>;
/** The same body run in Node (which has these standards natively), through JSON as the guest's answer is. */
async function node(body: string): Promise<unknown> {
  const out = await new AsyncFunction(body)();
  return JSON.parse(JSON.stringify(out ?? null));
}
/** Runs `body` in the guest and in Node, and expects the same answer. */
async function agree(body: string): Promise<unknown> {
  const [inGuest, inNode] = await Promise.all([guest(body), node(body)]);
  expect(inGuest).toEqual(inNode);
  return inGuest;
}

const URL_PARTS = `const parts = (u) => ({ href: u.href, origin: u.origin, protocol: u.protocol, username: u.username, password: u.password,
  host: u.host, hostname: u.hostname, port: u.port, pathname: u.pathname, search: u.search, hash: u.hash, json: JSON.stringify(u), str: String(u) });`;

describe('URL', () => {
  it('parses like Node: absolute, relative with a base, non-ASCII hosts and paths, special and opaque schemes', async () => {
    const out = await agree(`${URL_PARTS}
      return [
        parts(new URL('https://user:pa%20ss@Example.COM:8443/a/b/../c?x=1&y=%C3%BC#frag')),
        parts(new URL('../d/e?q#h', 'https://example.com/a/b/c')),
        parts(new URL('//other.test/p', 'https://example.com/a')),
        parts(new URL('https://bücher.example/straße/日本?ö=ä#ü')),
        parts(new URL('HTTP://EXAMPLE.com:80/./x/%2e%2E/y')),
        parts(new URL('mailto:someone@example.com?subject=hi')),
        parts(new URL('file:///C:/dir/file.txt')),
        parts(new URL('data:text/plain,hello world')),
        parts(new URL('http://[::1]:3000/')),
        parts(new URL('http://192.168.0.1.:8080/')),
        parts(new URL(' \\t https://example.com/with space\\n ')),
        parts(new URL('https://example.com/😀?q=😀#😀')),
      ];`);
    expect((out as Array<{ hostname: string }>)[3]?.hostname).toBe('xn--bcher-kva.example');
  });

  it('throws TypeError on an invalid URL, and canParse / parse answer without throwing', async () => {
    const out = await guest(`
      const names = [];
      for (const [input, base] of [['not a url'], ['/relative'], ['https://exa mple.com'], ['http://[::1'], ['x', 'also not a base'], ['https://a:99999/']]) {
        try { new URL(input, base); names.push('parsed'); } catch (e) { names.push(e instanceof TypeError ? e.name + ':' + e.message : 'other'); }
      }
      return { names, can: [URL.canParse('https://a'), URL.canParse('nope'), URL.canParse('/x', 'https://a')], parse: [URL.parse('nope'), String(URL.parse('/x', 'https://a'))] };`);
    expect(out).toEqual({
      names: Array(6).fill('TypeError:Invalid URL'),
      can: [true, false, true],
      parse: [null, 'https://a/x'],
    });
  });

  it('setters behave like Node, including the ones browsers ignore', async () => {
    await agree(`${URL_PARTS}
      const u = new URL('https://example.com/a?b#c');
      const out = [];
      const set = (k, v) => { u[k] = v; out.push([k, v, parts(u)]); };
      set('pathname', '/new path/ü');
      set('search', 'x=1&y=two words');
      set('search', '');
      set('hash', 'top');
      set('hash', '');
      set('host', 'other.test:8080');
      set('hostname', 'bücher.example');
      set('port', '443');
      set('port', 'not a port');
      set('username', 'me@there');
      set('password', 'sécret');
      set('protocol', 'http');
      set('protocol', 'mailto');
      set('href', 'https://fresh.test/?k=v');
      try { u.href = 'not a url'; out.push('set'); } catch (e) { out.push(e.name); }
      out.push(parts(u));
      return out;`);
  });

  it('searchParams stay in sync with search, both ways', async () => {
    await agree(`
      const u = new URL('https://example.com/p?a=1&b=2&a=3#h');
      const sp = u.searchParams;
      const out = [sp === u.searchParams, sp.get('a'), sp.getAll('a'), sp.get('none'), sp.has('b'), sp.has('a', '3'), sp.size];
      sp.append('c', 'x y&z=ü😀');
      out.push(u.href, u.search);
      sp.set('a', 'one');
      out.push(u.href);
      sp.delete('b');
      out.push(u.href);
      sp.delete('a', 'nope');
      out.push(u.href);
      u.search = '?q=new+value&r=%26';
      out.push(sp.get('q'), sp.get('r'), [...sp], sp.toString());
      u.href = 'https://other.test/?z=26';
      out.push([...sp.keys()], [...sp.values()], [...sp.entries()]);
      sp.delete('z');
      out.push(u.href, u.search);
      sp.append('k', '');
      sp.sort();
      out.push(u.href);
      return out;`);
  });

  it('URLSearchParams on its own: every constructor form, encoding and decoding, iteration', async () => {
    await agree(`
      const out = [];
      const show = (sp) => out.push(sp.toString(), [...sp], sp.size);
      show(new URLSearchParams('?a=1&b=%20two+words&c&=empty&&d=%zz&e=%E2%82%AC&f=%FF'));
      show(new URLSearchParams({ x: '1', 'ü': 'ö', sp: 'a b' }));
      show(new URLSearchParams([['a', '1'], ['a', '2'], ['b', '\\uD800']]));
      show(new URLSearchParams(new URLSearchParams('k=v')));
      show(new URLSearchParams(new Map([['m', 'n']])));
      show(new URLSearchParams());
      const sp = new URLSearchParams('b=2&a=1&c=3&a=0');
      sp.sort();
      const seen = [];
      sp.forEach((v, k, self) => seen.push(k + '=' + v + ':' + (self === sp)));
      out.push(sp.toString(), seen, Object.prototype.toString.call(sp));
      out.push(new URLSearchParams({ s: "*-._~!'()@/?:;,$" }).toString());
      try { new URLSearchParams([['only one']]); } catch (e) { out.push(e.name); }
      try { sp.append('x'); } catch (e) { out.push(e.name); }
      return out;`);
  });
});

describe('TextEncoder and TextDecoder', () => {
  it('encode and decode UTF-8 like Node, non-BMP characters and lone surrogates included', async () => {
    await agree(`
      const enc = new TextEncoder(), dec = new TextDecoder();
      const strings = ['', 'ascii', 'é€', '😀𝄞', 'a\\uD800b', '\\uDC00', 'x\\uD83D', '\\uFEFFbom', 'z'.repeat(20000) + '日本'];
      const out = strings.map((s) => { const b = enc.encode(s); return [b.length, Array.from(b.slice(0, 16)), dec.decode(b).length, dec.decode(b).slice(-4)]; });
      out.push(enc.encoding, dec.encoding, dec.fatal, dec.ignoreBOM);
      return out;`);
  });

  it('knows only UTF-8', async () => {
    expect(await guest(`const out = []; for (const l of ['latin1', 'utf-16le', 'nonsense']) { try { new TextDecoder(l); out.push('ok'); } catch (e) { out.push(e.name); } } return out;`)).toEqual([
      'RangeError',
      'RangeError',
      'RangeError',
    ]);
  });

  it('decodes invalid sequences with U+FFFD per maximal subpart, and throws when fatal', async () => {
    await agree(`
      const dec = new TextDecoder();
      const bad = [[0xff], [0xc0, 0x80], [0xe0, 0x80, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xf0, 0x9f, 0x98], [0xe2, 0x82], [0x61, 0xf0, 0x9f, 0x41], [0xef, 0xbb, 0xbf, 0x61]];
      const out = bad.map((b) => Array.from(dec.decode(new Uint8Array(b)), (c) => c.codePointAt(0)));
      out.push(new TextDecoder('utf-8', { ignoreBOM: true }).decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x61])).length);
      const fatal = new TextDecoder('utf8', { fatal: true });
      for (const b of bad.slice(0, 3)) { try { fatal.decode(new Uint8Array(b)); out.push('decoded'); } catch (e) { out.push(e.name); } }
      out.push(fatal.decode(new Uint8Array([0xe2, 0x82, 0xac])));
      return out;`);
  });

  it('streams a character split across chunks, reads DataView and ArrayBuffer input, and encodes into a buffer', async () => {
    await agree(`
      const bytes = new TextEncoder().encode('a€😀b');
      const dec = new TextDecoder();
      let text = '';
      for (const b of bytes) text += dec.decode(new Uint8Array([b]), { stream: true });
      text += dec.decode();
      const buf = new Uint8Array(5);
      const r = new TextEncoder().encodeInto('a€😀', buf);
      const labels = [];
      for (const l of ['UTF-8', ' utf8 ', 'unicode-1-1-utf-8']) { try { labels.push(new TextDecoder(l).encoding); } catch (e) { labels.push(e.name); } }
      return [text, dec.decode(new DataView(bytes.buffer, 1, 3)), dec.decode(bytes.buffer), r, Array.from(buf), labels];`);
  });
});

describe('atob and btoa', () => {
  it('agree with Node, whitespace and missing padding included', async () => {
    await agree(`
      const all = String.fromCharCode(...Array.from({ length: 256 }, (_, i) => i));
      return [btoa(''), btoa('a'), btoa('ab'), btoa('abc'), btoa(all), atob(btoa(all)) === all,
        atob(' aGVs\\nbG8 '), atob('YQ'), atob('YWI='), atob('YW=='), atob(btoa('é'))];`);
  });

  it('throw InvalidCharacterError DOMExceptions on bad input', async () => {
    await agree(`
      const out = [];
      for (const f of [() => btoa('€'), () => btoa('😀'), () => atob('a'), () => atob('ab!c'), () => atob('YQ==='), () => atob('€€€€'), () => atob('Y=Q=')]) {
        try { out.push(f()); } catch (e) { out.push([e.name, e.code, e instanceof DOMException]); }
      }
      return out;`);
  });
});

describe('crypto', () => {
  it('digests with SHA-1, SHA-256, SHA-384 and SHA-512 from any buffer source', async () => {
    const out = (await guest(`
      const hex = (b) => Array.from(new Uint8Array(b), (x) => x.toString(16).padStart(2, '0')).join('');
      const data = new TextEncoder().encode('the quick brown fox 😀');
      const out = {};
      for (const alg of ['SHA-1', 'SHA-256', 'sha-384', { name: 'SHA-512' }]) out[alg.name ?? alg] = hex(await crypto.subtle.digest(alg, data));
      out.view = hex(await crypto.subtle.digest('SHA-256', new DataView(data.buffer, 4, 5)));
      out.buffer = hex(await crypto.subtle.digest('SHA-256', data.buffer));
      out.big = hex(await crypto.subtle.digest('SHA-256', new Uint8Array(1024 * 1024).fill(7).fill(0, 1000, 2000)));
      out.zeros = hex(await crypto.subtle.digest('SHA-1', new Uint8Array([0, 1, 0])));
      return out;`)) as Record<string, string>;
    const data = Buffer.from('the quick brown fox 😀');
    expect(out['SHA-1']).toBe(createHash('sha1').update(data).digest('hex'));
    expect(out['SHA-256']).toBe(createHash('sha256').update(data).digest('hex'));
    expect(out['sha-384']).toBe(createHash('sha384').update(data).digest('hex'));
    expect(out['SHA-512']).toBe(createHash('sha512').update(data).digest('hex'));
    expect(out.view).toBe(createHash('sha256').update(data.subarray(4, 9)).digest('hex'));
    expect(out.buffer).toBe(out['SHA-256']);
    expect(out.big).toBe(createHash('sha256').update(Buffer.alloc(1024 * 1024, 7).fill(0, 1000, 2000)).digest('hex'));
    expect(out.zeros).toBe(createHash('sha1').update(Buffer.from([0, 1, 0])).digest('hex'));
  });

  it('signs and verifies HMAC as Node does, e.g. a webhook signature', async () => {
    const body = `
      const enc = new TextEncoder();
      const hex = (b) => Array.from(new Uint8Array(b), (x) => x.toString(16).padStart(2, '0')).join('');
      const key = await crypto.subtle.importKey('raw', enc.encode('whsec_ü'), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
      const sig = await crypto.subtle.sign('HMAC', key, enc.encode('{"id":1}'));
      const k512 = await crypto.subtle.importKey('raw', new Uint8Array(200).fill(1), { name: 'hmac', hash: { name: 'SHA-512' } }, true, ['sign']);
      return [hex(sig), await crypto.subtle.verify('HMAC', key, sig, enc.encode('{"id":1}')),
        await crypto.subtle.verify({ name: 'HMAC' }, key, sig, enc.encode('{"id":2}')),
        await crypto.subtle.verify('HMAC', key, sig.slice(0, 31), enc.encode('{"id":1}')),
        hex(await crypto.subtle.sign('HMAC', k512, new Uint8Array(0))),
        key.type, key.extractable, key.algorithm, key.usages, hex(await crypto.subtle.exportKey('raw', k512)).length];`;
    const out = await agree(body);
    expect((out as string[])[0]).toBe(createHmac('sha256', 'whsec_ü').update('{"id":1}').digest('hex'));
    expect((out as string[])[4]).toBe(createHmac('sha512', Buffer.alloc(200, 1)).update('').digest('hex'));
  });

  it('refuses what Web Crypto refuses, with the same error names', async () => {
    await agree(`
      const out = [];
      const enc = new TextEncoder();
      const attempt = async (p) => { try { await p(); out.push('ok'); } catch (e) { out.push(e.name); } };
      await attempt(() => crypto.subtle.digest('MD5', enc.encode('x')));
      await attempt(() => crypto.subtle.digest('SHA-256', 'a string'));
      await attempt(() => crypto.subtle.importKey('raw', enc.encode('k'), { name: 'HMAC', hash: 'SHA-256' }, false, ['encrypt']));
      await attempt(() => crypto.subtle.importKey('raw', enc.encode('k'), { name: 'HMAC', hash: 'SHA-256' }, false, []));
      await attempt(() => crypto.subtle.importKey('raw', enc.encode('k'), { name: 'HMAC', hash: 'MD5' }, false, ['sign']));
      const verifyOnly = await crypto.subtle.importKey('raw', enc.encode('k'), { name: 'HMAC', hash: 'SHA-1' }, false, ['verify']);
      await attempt(() => crypto.subtle.sign('HMAC', verifyOnly, enc.encode('x')));
      await attempt(() => crypto.subtle.sign('HMAC', { type: 'secret' }, enc.encode('x')));
      return out;`);
    // Node 20 names this one InvalidAccessException; Web Crypto says InvalidAccessError.
    expect(await guest(`const k = await crypto.subtle.importKey('raw', new Uint8Array(4), { name: 'HMAC', hash: 'SHA-1' }, false, ['sign']);
      try { await crypto.subtle.exportKey('raw', k); } catch (e) { return e.name; }`)).toBe('InvalidAccessError');
  });

  it('getRandomValues fills integer arrays up to 65536 bytes; randomUUID is a v4 UUID', async () => {
    const out = (await guest(`
      const a = crypto.getRandomValues(new Uint8Array(65536));
      const b = new Uint32Array(4); const same = crypto.getRandomValues(b) === b;
      const errors = [];
      for (const x of [new Uint8Array(65537), new Float64Array(2), new DataView(new ArrayBuffer(4)), null, [1, 2]]) {
        try { crypto.getRandomValues(x); errors.push('ok'); } catch (e) { errors.push(e.name); }
      }
      const counts = new Array(256).fill(0); for (const x of a) counts[x]++;
      return { same, nonzero: b.some((x) => x !== 0), min: Math.min(...counts), max: Math.max(...counts), errors,
        uuids: [crypto.randomUUID(), crypto.randomUUID()] };`)) as {
      same: boolean;
      nonzero: boolean;
      min: number;
      max: number;
      errors: string[];
      uuids: string[];
    };
    expect(out.same).toBe(true);
    expect(out.nonzero).toBe(true);
    expect(out.min).toBeGreaterThan(150);
    expect(out.max).toBeLessThan(370);
    expect(out.errors).toEqual(['QuotaExceededError', 'TypeMismatchError', 'TypeMismatchError', 'TypeError', 'TypeError']);
    for (const u of out.uuids) expect(u).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(out.uuids[0]).not.toBe(out.uuids[1]);
  });
});

describe('structuredClone', () => {
  it('clones JSON-able values, Date, Map, Set, ArrayBuffer, typed arrays and cycles as Node does', async () => {
    await agree(`
      const buf = new ArrayBuffer(8);
      const a = new Uint8Array(buf, 0, 4).fill(1), b = new Uint16Array(buf, 4, 2);
      const obj = { n: 1, s: 'x', nested: { arr: [1, { deep: true }, null] }, d: new Date(86400000), m: new Map([[{ k: 1 }, new Set([1, 'two'])]]), a, b, buf };
      obj.self = obj;
      const c = structuredClone(obj);
      b[0] = 9;
      return [c !== obj, c.self === c, c.nested.arr[1].deep, c.d instanceof Date, c.d.getTime(), c.m instanceof Map, [...[...c.m.keys()][0] ? [1] : []],
        [...[...c.m.values()][0]], c.a.buffer === c.b.buffer, c.a.buffer === c.buf, Array.from(new Uint8Array(c.buf)), c.b[0], c.a instanceof Uint8Array,
        structuredClone([1, , 3]).length, structuredClone(new Error('boom', { cause: 1 })).message, structuredClone(/a+/gi).flags,
        Object.getPrototypeOf(structuredClone(new (class K { x = 1 })())) === Object.prototype, structuredClone(undefined), structuredClone(-0) === 0];`);
  });

  it('refuses functions, symbols and promises with DataCloneError', async () => {
    await agree(`
      const out = [];
      for (const v of [() => 1, { f() {} }, Symbol('s'), Promise.resolve(1), new WeakMap()]) {
        try { structuredClone(v); out.push('cloned'); } catch (e) { out.push([e.name, e instanceof DOMException]); }
      }
      return out;`);
  });
});

describe('timers', () => {
  it('run in order, can be cleared, and intervals repeat until cleared', async () => {
    const out = await guest(`
      const seen = [];
      const t0 = Date.now();
      await new Promise((resolve) => {
        setTimeout(() => seen.push('b'), 500);
        setTimeout((x, y) => seen.push('a' + x + y), 40, 1, 2);
        const gone = setTimeout(() => seen.push('cleared'), 30);
        clearTimeout(gone);
        setTimeout(() => seen.push('zero'), -5);
        setTimeout(() => seen.push('nan'), NaN);
        let n = 0;
        const iv = setInterval(() => { seen.push('i' + n); if (++n === 3) clearInterval(iv); }, 80);
        setTimeout(resolve, 550);
      });
      return { seen, waited: Date.now() - t0 >= 540 };`);
    expect(out).toEqual({ seen: ['zero', 'nan', 'a12', 'i0', 'i1', 'i2', 'b'], waited: true });
  });

  it('waiting is wall time, not CPU time', async () => {
    const out = await run(`await new Promise((r) => setTimeout(r, 500)); return 'done';`, { limits: { ...LIMITS, cpuMs: 100 } });
    expect(out).toMatchObject({ ok: true, value: 'done' });
    expect(out.cpuMs).toBeLessThan(100);
    expect(out.wallMs).toBeGreaterThanOrEqual(480);
  });

  it('a timer waiting past the wall time ends at the wall; a loop in a callback at the CPU deadline', async () => {
    const wall = await run(`await new Promise((r) => setTimeout(r, 60000)); return 1;`, { limits: { ...LIMITS, wallMs: 400 } });
    expect(wall).toMatchObject({ ok: false, failure: { kind: 'wall_limit' } });
    const cpu = await run(`await new Promise(() => setTimeout(() => { for (;;) {} }, 10)); return 1;`, { limits: { ...LIMITS, cpuMs: 200, wallMs: 1000 } });
    expect(cpu).toMatchObject({ ok: false, failure: { kind: 'cpu_limit' } });
  });

  it('a timer still pending when the function answers never fires, not even in the next invocation', async () => {
    const unit = `web:late:${++units}`;
    const invoke = (body: string) =>
      pool.invoke({ project: 'late', unit, source: async () => unitSource(body), entry: 'handler', event: null, limits: LIMITS, host: async () => ({ value: null }) });
    // The second call waits 300 ms itself: a timer of the first one left in its sandbox would fire then.
    const body = `
      if (globalThis.calls === undefined) { globalThis.calls = 0; globalThis.fired = []; }
      const call = ++globalThis.calls;
      if (call > 1) await new Promise((r) => setTimeout(r, 300));
      setTimeout(() => { globalThis.fired.push(call); console.log('late ' + call); }, 50);
      setInterval(() => globalThis.fired.push('iv' + call), 20);
      return { call, fired: globalThis.fired.slice() };`;
    const first = await invoke(body);
    expect(first).toMatchObject({ ok: true, value: { call: 1, fired: [] } });
    await new Promise((r) => setTimeout(r, 200));
    const second = await invoke(body);
    // Per-project concurrency 2 may pick the other sandbox: then `call` is 1 again, and nothing fired either.
    expect(second).toMatchObject({ ok: true, value: { fired: [] } });
    expect(second.logs).toEqual([]);
  });

  it('a flood of timers stops at the per-invocation limit with a catchable error', async () => {
    const out = await guest(`
      let n = 0;
      try { for (;;) { setTimeout(() => {}, 1e9); n++; } } catch (e) { return [n, e.code, e.message]; }`);
    expect(out).toEqual([1000, 'function_timers_limit', 'more than 1000 timers in one invocation']);
    // An interval of 0 ms: each tick is one timer; the tick that cannot re-arm still runs, then it stops.
    const interval = await run(
      `let ticks = 0;
       await new Promise((resolve) => setInterval(() => { if (++ticks === 1000) resolve(); }, 0));
       return ticks;`,
      { limits: { ...LIMITS, wallMs: 15000 } },
    );
    expect(interval).toMatchObject({ ok: true, value: 1000 });
    expect(interval.logs).toEqual([expect.objectContaining({ level: 'error', text: expect.stringContaining('more than 1000 timers in one invocation') })]);
  });

  it('a timer set at the top level of the code fails its loading; a handler that is not a function is refused', async () => {
    const top = await pool.invoke({
      project: 'web',
      unit: `web:top:${++units}`,
      source: async () => `setTimeout(() => {}, 1); var __plinthUnit = { handler: () => 1 };`,
      entry: 'handler',
      event: null,
      limits: LIMITS,
      host: async () => ({ value: null }),
    });
    expect(top).toMatchObject({ ok: false, failure: { kind: 'compile', message: expect.stringContaining('only while the function runs') } });
    expect(await guest(`try { setTimeout('globalThis.x = 1', 1); } catch (e) { return e.name; }`)).toBe('TypeError');
  });
});

describe('hostile use', () => {
  it('the bridges are not reachable from the tenant code', async () => {
    expect(
      await guest(`return [typeof __plinthHostSync, typeof __plinthTimer, typeof hostSync, typeof hostTimer,
        Object.getOwnPropertyNames(globalThis).filter((n) => /plinth|host/i.test(n) && n !== 'PlinthError' && n !== '__plinthUnit')].join();`),
    ).toBe('undefined,undefined,undefined,undefined,');
  });

  it('huge inputs are refused before the host copies them', async () => {
    const out = await guestWith({ ...LIMITS, cpuMs: 8000, wallMs: 12000 }, `
      const out = [];
      const attempt = async (f) => { try { await f(); out.push('ok'); } catch (e) { out.push(e.name + ': ' + e.message); } };
      await attempt(() => new URL('https://a.test/' + 'x'.repeat(70 * 1024)));
      await attempt(() => new URL('/x', 'https://a.test/' + 'x'.repeat(70 * 1024)));
      await attempt(() => { new URL('https://a.test/').pathname = 'é'.repeat(70 * 1024); });
      await attempt(() => { const u = new URL('https://a.test/'); for (const k of ['pathname', 'search', 'hash']) u[k] = 'é'.repeat(60000); });
      await attempt(() => crypto.subtle.digest('SHA-256', new Uint8Array(5 * 1024 * 1024)));
      await attempt(() => crypto.subtle.importKey('raw', new Uint8Array(70000), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']));
      await attempt(() => atob(btoa('x'.repeat(2 * 1024 * 1024))).length);
      await attempt(() => btoa('x'.repeat(5 * 1024 * 1024)));
      await attempt(() => new TextDecoder().decode(new TextEncoder().encode('é'.repeat(64 * 1024))).length);
      return out;`);
    expect(out).toEqual([
      'RangeError: the URL is longer than 65536 characters',
      'RangeError: the base URL is longer than 65536 characters',
      'RangeError: the value is longer than 65536 characters',
      'RangeError: the URL is longer than 1048576 characters',
      expect.stringMatching(/^NotSupportedError: /),
      'DataError: The key is longer than 65536 bytes',
      'ok',
      'RangeError: the data is larger than 4194304 bytes',
      'ok',
    ]);
  });

  it('wrong types get TypeErrors, never reach the host unchecked', async () => {
    await agree(`
      const out = [];
      const attempt = async (f) => { try { const v = await f(); out.push(typeof v === 'object' && v !== null ? String(v) : v); } catch (e) { out.push(e.name); } };
      await attempt(() => new URL(123));
      await attempt(() => new URL({ toString: () => 'https://from-object.test/' }).href);
      await attempt(() => new URL());
      await attempt(() => new TextDecoder().decode('a string'));
      await attempt(() => new TextDecoder().decode(null));
      await attempt(() => new TextEncoder().encodeInto('x', [0, 0]));
      await attempt(() => crypto.subtle.digest({}, new Uint8Array(1)));
      await attempt(() => crypto.subtle.digest(null, new Uint8Array(1)));
      await attempt(() => crypto.getRandomValues());
      await attempt(() => structuredClone());
      await attempt(() => URL.prototype.href);
      await attempt(() => Object.getOwnPropertyDescriptor(URL.prototype, 'href').get.call({}));
      return out;`);
  });

  it('a forged CryptoKey or a guest calling the engine with junk cannot confuse the host', async () => {
    const out = await guest(`
      const out = [];
      const attempt = async (f) => { try { out.push(String(await f())); } catch (e) { out.push(e.name); } };
      await attempt(() => crypto.subtle.sign('HMAC', Object.create(CryptoKey.prototype), new Uint8Array(1)));
      await attempt(() => new CryptoKey());
      await attempt(() => clearTimeout({ valueOf() { return 1e300; } }));
      await attempt(() => clearTimeout('not an id'));
      return out;`);
    expect(out).toEqual(['TypeError', 'TypeError', 'undefined', 'undefined']);
  });

  it('a guest that replaces built-ins first still gets correct answers', async () => {
    const out = (await guest(`
      const keep = { parse: JSON.parse };
      JSON.parse = () => { throw new Error('replaced parse'); };
      JSON.stringify = () => '"replaced"';
      Function.prototype.call = () => { throw new Error('replaced call'); };
      Function.prototype.apply = () => { throw new Error('replaced apply'); };
      Array.prototype.push = () => { throw new Error('replaced push'); };
      Array.prototype.join = () => 'replaced join';
      Array.prototype.toJSON = () => 'replaced toJSON';
      Uint8Array.prototype.set = () => { throw new Error('replaced set'); };
      Object.defineProperty(Uint8Array.prototype, 'length', { get() { return 0; } });
      String.prototype.charCodeAt = () => 0;
      String.prototype.slice = () => '';
      String.fromCharCode = () => 'replaced';
      Object.prototype.v = 'polluted v';
      Object.prototype.e = { name: 'TypeError', message: 'polluted e' };
      Map.prototype.get = () => 'replaced get';
      DOMException = function () {};
      const hex = (b) => { let s = ''; const u = new Uint8Array(b); for (let i = 0; i < u.byteLength; i++) s += (u[i] < 16 ? '0' : '') + u[i].toString(16); return s; };
      const url = new URL('https://example.com/p?a=1');
      url.searchParams.append('b', 'x y');
      const digest = hex(await crypto.subtle.digest('SHA-256', new TextEncoder().encode('abc')));
      const key = await crypto.subtle.importKey('raw', new TextEncoder().encode('k'), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
      const mac = hex(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode('m')));
      let caught = ''; try { atob('!'); } catch (e) { caught = e.name; }
      const clone = structuredClone({ m: new Map([[1, 2]]) });
      const waited = await new Promise((r) => setTimeout(() => r('waited'), 5));
      return { href: url.href, digest, mac, text: new TextDecoder().decode(new TextEncoder().encode('ü😀')), b64: btoa('hi'), caught, clone: clone.m.size, waited, uuid: crypto.randomUUID().length };`)) as Record<string, unknown>;
    expect(out).toEqual({
      href: 'https://example.com/p?a=1&b=x+y',
      digest: createHash('sha256').update('abc').digest('hex'),
      mac: createHmac('sha256', 'k').update('m').digest('hex'),
      text: 'ü😀',
      b64: 'aGk=',
      caught: 'InvalidCharacterError',
      clone: 1,
      waited: 'waited',
      uuid: 36,
    });
  });
});
