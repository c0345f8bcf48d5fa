/**
 * The Web standards a function expects and QuickJS lacks, defined in every unit's context after
 * the prelude and before the tenant's code (engine.ts): URL and URLSearchParams, TextEncoder and
 * TextDecoder, atob and btoa, crypto (getRandomValues, randomUUID, subtle.digest, HMAC),
 * structuredClone, and setTimeout / setInterval with their clear functions.
 *
 * The code evaluates to a function the engine calls once with two bridges, which therefore are
 * never on the global object:
 *  - `hostSync(name, argsJson, bytes?)` → JSON text `{"v": …}` or `{"e": {name, message}}`
 *    (host-sync.ts), binary data crossing as strings of one character per byte (the bytes
 *    argument through escape(), answers inside the JSON);
 *  - `hostTimer('set', id, delayMs)` → a promise the host resolves after the delay, and
 *    `hostTimer('clear', id)`.
 * Every built-in it relies on is captured here, before the tenant's code runs: a function that
 * replaces JSON, Function.prototype.call or Uint8Array.prototype.set breaks at most itself, and
 * the host checks every argument again whatever arrives.
 */
export const GUEST_STDLIB = String.raw`(function (hostSync, hostTimer) {
  'use strict';
  const g = globalThis;
  const O = Object;
  const defineProperty = O.defineProperty, getOwnPropertyDescriptor = O.getOwnPropertyDescriptor;
  const getPrototypeOf = O.getPrototypeOf, setPrototypeOf = O.setPrototypeOf, objectKeys = O.keys, freeze = O.freeze;
  const uncurry = Function.prototype.bind.bind(Function.prototype.call);
  const apply = Reflect.apply, ownKeys = Reflect.ownKeys;
  const stringify = JSON.stringify, parse = JSON.parse;
  const hasOwn = uncurry(O.prototype.hasOwnProperty);
  const objectToString = uncurry(O.prototype.toString);
  const StringCtor = String, fromCharCode = String.fromCharCode, escapeBytes = escape;
  const charCodeAt = uncurry(String.prototype.charCodeAt);
  const codePointAt = uncurry(String.prototype.codePointAt);
  const strSlice = uncurry(String.prototype.slice);
  const strIndexOf = uncurry(String.prototype.indexOf);
  const toLowerCase = uncurry(String.prototype.toLowerCase);
  const toUpperCase = uncurry(String.prototype.toUpperCase);
  const toWellFormed = uncurry(String.prototype.toWellFormed);
  const ArrayCtor = Array, isArray = Array.isArray;
  const arrayPush = uncurry(Array.prototype.push);
  const arrayJoin = uncurry(Array.prototype.join);
  const arraySplice = uncurry(Array.prototype.splice);
  const arraySort = uncurry(Array.prototype.sort);
  const MathFloor = Math.floor, MathMin = Math.min;
  const NumberCtor = Number, isSafeInteger = Number.isSafeInteger;
  const TypeErrorCtor = TypeError, RangeErrorCtor = RangeError, ErrorCtor = Error;
  const DOMExceptionCtor = g.DOMException;
  const AB = ArrayBuffer, U8 = Uint8Array, U16 = Uint16Array, DV = DataView;
  const TA = getPrototypeOf(U8.prototype);
  const getter = (proto, key) => uncurry(getOwnPropertyDescriptor(proto, key).get);
  const taTag = getter(TA, Symbol.toStringTag);
  const taBuffer = getter(TA, 'buffer'), taOffset = getter(TA, 'byteOffset'), taBytes = getter(TA, 'byteLength'), taLength = getter(TA, 'length');
  const taSet = uncurry(TA.set);
  const abBytes = getter(AB.prototype, 'byteLength');
  const dvBuffer = getter(DV.prototype, 'buffer'), dvOffset = getter(DV.prototype, 'byteOffset'), dvBytes = getter(DV.prototype, 'byteLength');
  const MapCtor = Map, SetCtor = Set;
  const mapGet = uncurry(Map.prototype.get), mapSet = uncurry(Map.prototype.set), mapHas = uncurry(Map.prototype.has);
  const mapDelete = uncurry(Map.prototype.delete), mapForEach = uncurry(Map.prototype.forEach), mapSize = getter(Map.prototype, 'size');
  const setAdd = uncurry(Set.prototype.add), setForEach = uncurry(Set.prototype.forEach), setSize = getter(Set.prototype, 'size');
  const DateCtor = Date, dateGetTime = uncurry(Date.prototype.getTime);
  const RegExpCtor = RegExp, reSource = getter(RegExp.prototype, 'source'), reFlags = getter(RegExp.prototype, 'flags');
  const BooleanCtor = Boolean, booleanValueOf = uncurry(Boolean.prototype.valueOf);
  const numberValueOf = uncurry(Number.prototype.valueOf), stringValueOf = uncurry(String.prototype.valueOf);
  const BigIntCtor = BigInt, bigintValueOf = uncurry(BigInt.prototype.valueOf);
  const promiseThen = uncurry(Promise.prototype.then);
  const SymbolIterator = Symbol.iterator, SymbolToStringTag = Symbol.toStringTag;
  const consoleError = g.console.error;
  const TYPED = { __proto__: null };
  for (const C of [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array, Float32Array, Float64Array, BigInt64Array, BigUint64Array]) TYPED[C.name] = C;
  if (typeof Float16Array === 'function') TYPED.Float16Array = Float16Array;
  const INTEGER_TYPED = { __proto__: null, Int8Array: 1, Uint8Array: 1, Uint8ClampedArray: 1, Int16Array: 1, Uint16Array: 1, Int32Array: 1, Uint32Array: 1, BigInt64Array: 1, BigUint64Array: 1 };

  function define(target, name, value) {
    defineProperty(target, name, { value, writable: true, configurable: true, enumerable: false });
  }
  function tag(proto, name) {
    defineProperty(proto, SymbolToStringTag, { value: name, configurable: true });
  }
  function attempt(fn, value) {
    try {
      return fn(value);
    } catch (err) {
      return undefined;
    }
  }
  function domError(message, name) {
    return new DOMExceptionCtor(message, name);
  }
  function needArgs(given, needed, what) {
    if (given < needed) throw new TypeErrorCtor(what + ': ' + needed + ' argument' + (needed > 1 ? 's' : '') + ' required, but only ' + given + ' present');
  }
  /** WebIDL USVString: a string, lone surrogates replaced by U+FFFD. */
  function usv(value) {
    if (typeof value === 'symbol') throw new TypeErrorCtor('Cannot convert a Symbol value to a string');
    return toWellFormed(StringCtor(value));
  }

  // ---- the bridge ----
  const DOM_NAMES = { __proto__: null, NotSupportedError: 1, QuotaExceededError: 1, InvalidAccessError: 1, DataError: 1, SyntaxError: 1, OperationError: 1, TypeMismatchError: 1 };
  function host(name, args, bytes) {
    setPrototypeOf(args, null); // stringify must not find a tenant's Array.prototype.toJSON
    // The bytes are escaped: the host reads a string only up to its first NUL.
    const text = bytes === undefined ? hostSync(name, stringify(args)) : hostSync(name, stringify(args), escapeBytes(bytes));
    const answer = parse(text);
    if (answer !== null && typeof answer === 'object' && hasOwn(answer, 'v')) return answer.v;
    const e = answer !== null && typeof answer === 'object' && hasOwn(answer, 'e') ? answer.e : {};
    const message = typeof e.message === 'string' ? e.message : 'the host function failed';
    if (e.name === 'TypeError') throw new TypeErrorCtor(message);
    if (e.name === 'RangeError') throw new RangeErrorCtor(message);
    if (typeof e.name === 'string' && DOM_NAMES[e.name]) throw domError(message, e.name);
    throw new ErrorCtor(message);
  }

  // ---- bytes ----
  /** The bytes of an ArrayBuffer, a typed array or a DataView, as a Uint8Array over the same memory. */
  function viewOf(value, what) {
    if (value !== null && typeof value === 'object') {
      if (taTag(value) !== undefined) return new U8(taBuffer(value), taOffset(value), taBytes(value));
      const ab = attempt(abBytes, value);
      if (ab !== undefined) return new U8(value, 0, ab);
      const dv = attempt(dvBytes, value);
      if (dv !== undefined) return new U8(dvBuffer(value), dvOffset(value), dv);
    }
    throw new TypeErrorCtor(what + ' is not an ArrayBuffer, a typed array or a DataView');
  }
  const CHUNK = 8192;
  /**
   * fromCharCode over a typed array's elements: apply reads the array's "length", which a
   * tenant may have redefined on the prototype; an own property on the view shadows it.
   */
  function charsOf(view, n) {
    defineProperty(view, 'length', { value: n });
    return apply(fromCharCode, null, view);
  }
  /** A Uint8Array as a string of one character per byte. */
  function latin1(view) {
    const n = taLength(view), buffer = taBuffer(view), offset = taOffset(view);
    if (n <= CHUNK) return charsOf(new U8(buffer, offset, n), n);
    const parts = [];
    for (let i = 0; i < n; i += CHUNK) {
      const size = MathMin(CHUNK, n - i);
      arrayPush(parts, charsOf(new U8(buffer, offset + i, size), size));
    }
    return arrayJoin(parts, '');
  }
  function bytesOfLatin1(text) {
    const n = text.length, out = new U8(n);
    for (let i = 0; i < n; i++) out[i] = charCodeAt(text, i);
    return out;
  }
  function bufferOfLatin1(text) {
    return taBuffer(bytesOfLatin1(text));
  }
  /** Code units collected in a scratch Uint16Array and turned into a string a chunk at a time. */
  function unitsWriter() {
    const scratch = new U16(CHUNK);
    const parts = [];
    let n = 0;
    return {
      put(unit) {
        if (n === CHUNK) {
          arrayPush(parts, charsOf(new U16(taBuffer(scratch), 0, CHUNK), CHUNK));
          n = 0;
        }
        scratch[n++] = unit;
      },
      done() {
        if (n > 0) arrayPush(parts, charsOf(new U16(taBuffer(scratch), 0, n), n));
        n = 0;
        return parts.length === 1 ? parts[0] : arrayJoin(parts, '');
      },
    };
  }

  // ---- UTF-8 ----
  function utf8Length(s) {
    const n = s.length;
    let size = 0;
    for (let i = 0; i < n; i++) {
      const c = charCodeAt(s, i);
      if (c < 0x80) size += 1;
      else if (c < 0x800) size += 2;
      else if (c >= 0xd800 && c <= 0xdbff && i + 1 < n && (charCodeAt(s, i + 1) & 0xfc00) === 0xdc00) {
        size += 4;
        i++;
      } else size += 3;
    }
    return size;
  }
  /** Encodes s into out from index 0; stops before a character that does not fit. Returns [read, written]. */
  function utf8Write(s, out, room) {
    const n = s.length;
    let i = 0, j = 0;
    while (i < n) {
      let c = charCodeAt(s, i);
      if (c < 0x80) {
        if (j + 1 > room) break;
        out[j++] = c;
        i += 1;
        continue;
      }
      let width = 1;
      if (c >= 0xd800 && c <= 0xdfff) {
        const d = c <= 0xdbff && i + 1 < n ? charCodeAt(s, i + 1) : 0;
        if ((d & 0xfc00) === 0xdc00) {
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          width = 2;
        } else c = 0xfffd;
      }
      if (c < 0x800) {
        if (j + 2 > room) break;
        out[j++] = 0xc0 | (c >> 6);
        out[j++] = 0x80 | (c & 0x3f);
      } else if (c < 0x10000) {
        if (j + 3 > room) break;
        out[j++] = 0xe0 | (c >> 12);
        out[j++] = 0x80 | ((c >> 6) & 0x3f);
        out[j++] = 0x80 | (c & 0x3f);
      } else {
        if (j + 4 > room) break;
        out[j++] = 0xf0 | (c >> 18);
        out[j++] = 0x80 | ((c >> 12) & 0x3f);
        out[j++] = 0x80 | ((c >> 6) & 0x3f);
        out[j++] = 0x80 | (c & 0x3f);
      }
      i += width;
    }
    return [i, j];
  }
  function utf8Encode(s) {
    const size = utf8Length(s);
    const out = new U8(size);
    utf8Write(s, out, size);
    return out;
  }
  /** The WHATWG UTF-8 decoder, resumable: state = { needed, seen, cp, lower, upper }. */
  function utf8DecodeInto(bytes, state, writer, fatal, flush) {
    const n = taLength(bytes);
    let needed = state.needed, seen = state.seen, cp = state.cp, lower = state.lower, upper = state.upper;
    for (let i = 0; i < n; i++) {
      const b = bytes[i];
      if (needed === 0) {
        if (b < 0x80) writer.put(b);
        else if (b >= 0xc2 && b <= 0xdf) {
          needed = 1;
          cp = b & 0x1f;
        } else if (b >= 0xe0 && b <= 0xef) {
          if (b === 0xe0) lower = 0xa0;
          if (b === 0xed) upper = 0x9f;
          needed = 2;
          cp = b & 0xf;
        } else if (b >= 0xf0 && b <= 0xf4) {
          if (b === 0xf0) lower = 0x90;
          if (b === 0xf4) upper = 0x8f;
          needed = 3;
          cp = b & 0x7;
        } else {
          if (fatal) throw new TypeErrorCtor('The encoded data was not valid for encoding utf-8');
          writer.put(0xfffd);
        }
        continue;
      }
      if (b < lower || b > upper) {
        needed = seen = cp = 0;
        lower = 0x80;
        upper = 0xbf;
        if (fatal) {
          state.needed = 0;
          throw new TypeErrorCtor('The encoded data was not valid for encoding utf-8');
        }
        writer.put(0xfffd);
        i--;
        continue;
      }
      lower = 0x80;
      upper = 0xbf;
      cp = (cp << 6) | (b & 0x3f);
      if (++seen === needed) {
        if (cp > 0xffff) {
          cp -= 0x10000;
          writer.put(0xd800 + (cp >> 10));
          writer.put(0xdc00 + (cp & 0x3ff));
        } else writer.put(cp);
        needed = seen = cp = 0;
      }
    }
    if (flush && needed !== 0) {
      needed = seen = cp = 0;
      lower = 0x80;
      upper = 0xbf;
      if (fatal) {
        state.needed = 0;
        throw new TypeErrorCtor('The encoded data was not valid for encoding utf-8');
      }
      writer.put(0xfffd);
    }
    state.needed = needed;
    state.seen = seen;
    state.cp = cp;
    state.lower = lower;
    state.upper = upper;
  }
  function freshState() {
    return { needed: 0, seen: 0, cp: 0, lower: 0x80, upper: 0xbf };
  }
  function utf8Decode(bytes) {
    const writer = unitsWriter();
    utf8DecodeInto(bytes, freshState(), writer, false, true);
    return writer.done();
  }

  class TextEncoder {
    get encoding() {
      return 'utf-8';
    }
    encode(input = '') {
      return utf8Encode(usv(input));
    }
    encodeInto(source, destination) {
      needArgs(arguments.length, 2, "Failed to execute 'encodeInto' on 'TextEncoder'");
      if (destination === null || typeof destination !== 'object' || taTag(destination) !== 'Uint8Array') throw new TypeErrorCtor('The destination is not a Uint8Array');
      const [read, written] = utf8Write(StringCtor(source), destination, taLength(destination));
      return { read, written };
    }
  }
  tag(TextEncoder.prototype, 'TextEncoder');

  const UTF8_LABELS = { __proto__: null, 'utf-8': 1, utf8: 1, 'unicode-1-1-utf-8': 1, 'unicode11utf8': 1, 'unicode20utf8': 1, 'x-unicode20utf8': 1 };
  class TextDecoder {
    #fatal;
    #ignoreBOM;
    #state = freshState();
    #bomDone = false;
    #streaming = false;
    constructor(label = 'utf-8', options = undefined) {
      let name = toLowerCase(StringCtor(label));
      let a = 0, b = name.length;
      while (a < b && strIndexOf(' \t\n\f\r', name[a]) >= 0) a++;
      while (b > a && strIndexOf(' \t\n\f\r', name[b - 1]) >= 0) b--;
      name = strSlice(name, a, b);
      if (!UTF8_LABELS[name]) throw new RangeErrorCtor('The encoding label provided (' + StringCtor(label) + ') is not supported: only utf-8 is');
      this.#fatal = !!(options && options.fatal);
      this.#ignoreBOM = !!(options && options.ignoreBOM);
    }
    get encoding() {
      return 'utf-8';
    }
    get fatal() {
      return this.#fatal;
    }
    get ignoreBOM() {
      return this.#ignoreBOM;
    }
    decode(input = undefined, options = undefined) {
      if (!this.#streaming) {
        this.#state = freshState();
        this.#bomDone = false;
      }
      const stream = !!(options && options.stream);
      this.#streaming = stream;
      const bytes = input === undefined ? new U8(0) : viewOf(input, 'The input');
      const writer = unitsWriter();
      try {
        utf8DecodeInto(bytes, this.#state, writer, this.#fatal, !stream);
      } catch (err) {
        this.#streaming = false;
        throw err;
      }
      let text = writer.done();
      if (!this.#ignoreBOM && !this.#bomDone && text.length > 0) {
        this.#bomDone = true;
        if (charCodeAt(text, 0) === 0xfeff) text = strSlice(text, 1);
      }
      return text;
    }
  }
  tag(TextDecoder.prototype, 'TextDecoder');

  // ---- base64, by the host ----
  function btoa(data) {
    needArgs(arguments.length, 1, "Failed to execute 'btoa'");
    try {
      return host('base64.encode', [], StringCtor(data));
    } catch (err) {
      // The host refuses a character above U+00FF as "not bytes".
      if (err instanceof TypeErrorCtor) throw domError('The string to be encoded contains characters outside of the Latin1 range.', 'InvalidCharacterError');
      throw err;
    }
  }
  function atob(data) {
    needArgs(arguments.length, 1, "Failed to execute 'atob'");
    const decoded = host('base64.decode', [StringCtor(data)]);
    if (decoded === null) throw domError('The string to be decoded is not correctly encoded.', 'InvalidCharacterError');
    return decoded;
  }

  // ---- URLSearchParams ----
  function isUnreserved(b) {
    return (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b === 0x2a || b === 0x2d || b === 0x2e || b === 0x5f;
  }
  const HEX = '0123456789ABCDEF';
  function formEncode(s) {
    let plain = true;
    for (let i = 0; i < s.length && plain; i++) plain = isUnreserved(charCodeAt(s, i));
    if (plain) return s;
    const bytes = utf8Encode(s);
    const writer = unitsWriter();
    for (let i = 0; i < taLength(bytes); i++) {
      const b = bytes[i];
      if (isUnreserved(b)) writer.put(b);
      else if (b === 0x20) writer.put(0x2b);
      else {
        writer.put(0x25);
        writer.put(charCodeAt(HEX, b >> 4));
        writer.put(charCodeAt(HEX, b & 15));
      }
    }
    return writer.done();
  }
  function hexValue(c) {
    if (c >= 0x30 && c <= 0x39) return c - 0x30;
    if (c >= 0x41 && c <= 0x46) return c - 0x37;
    if (c >= 0x61 && c <= 0x66) return c - 0x57;
    return -1;
  }
  function formDecode(s) {
    if (strIndexOf(s, '%') < 0 && strIndexOf(s, '+') < 0) return s;
    const bytes = utf8Encode(s);
    const n = taLength(bytes);
    const out = new U8(n);
    let j = 0;
    for (let i = 0; i < n; i++) {
      const b = bytes[i];
      if (b === 0x2b) out[j++] = 0x20;
      else if (b === 0x25 && i + 2 < n && hexValue(bytes[i + 1]) >= 0 && hexValue(bytes[i + 2]) >= 0) {
        out[j++] = (hexValue(bytes[i + 1]) << 4) | hexValue(bytes[i + 2]);
        i += 2;
      } else out[j++] = b;
    }
    return utf8Decode(new U8(taBuffer(out), 0, j));
  }
  function parseQuery(query) {
    const list = [];
    let start = 0;
    while (start <= query.length) {
      let end = strIndexOf(query, '&', start);
      if (end < 0) end = query.length;
      if (end > start) {
        const pair = strSlice(query, start, end);
        const eq = strIndexOf(pair, '=');
        const name = eq < 0 ? pair : strSlice(pair, 0, eq);
        const value = eq < 0 ? '' : strSlice(pair, eq + 1);
        arrayPush(list, [formDecode(name), formDecode(value)]);
      }
      start = end + 1;
    }
    return list;
  }
  function serializeQuery(list) {
    const parts = [];
    for (let i = 0; i < list.length; i++) arrayPush(parts, formEncode(list[i][0]) + '=' + formEncode(list[i][1]));
    return arrayJoin(parts, '&');
  }

  let paramsFor, paramsReset, urlSetQuery;
  class URLSearchParams {
    #list = [];
    #url = null;
    constructor(init = undefined) {
      if (init === undefined || init === null) return;
      if (typeof init === 'object' || typeof init === 'function') {
        if (#list in init) {
          const list = init.#list;
          for (let i = 0; i < list.length; i++) arrayPush(this.#list, [list[i][0], list[i][1]]);
          return;
        }
        const iterator = init[SymbolIterator];
        if (iterator !== undefined && iterator !== null) {
          if (typeof iterator !== 'function') throw new TypeErrorCtor("Failed to construct 'URLSearchParams': the iterator is not callable");
          for (const pair of init) {
            if (pair === null || (typeof pair !== 'object' && typeof pair !== 'function')) throw new TypeErrorCtor("Failed to construct 'URLSearchParams': each pair must be a sequence");
            const items = [];
            for (const item of pair) arrayPush(items, item);
            if (items.length !== 2) throw new TypeErrorCtor("Failed to construct 'URLSearchParams': each pair must have exactly two items");
            arrayPush(this.#list, [usv(items[0]), usv(items[1])]);
          }
          return;
        }
        for (const key of ownKeys(init)) {
          const desc = getOwnPropertyDescriptor(init, key);
          if (desc === undefined || !desc.enumerable) continue;
          arrayPush(this.#list, [usv(key), usv(init[key])]);
        }
        return;
      }
      let query = usv(init);
      if (query[0] === '?') query = strSlice(query, 1);
      this.#list = parseQuery(query);
    }
    static {
      paramsFor = (url, query) => {
        const params = new URLSearchParams();
        params.#list = parseQuery(query);
        params.#url = url;
        return params;
      };
      paramsReset = (params, query) => {
        params.#list = parseQuery(query);
      };
    }
    #update() {
      if (this.#url !== null) urlSetQuery(this.#url, serializeQuery(this.#list));
    }
    get size() {
      return this.#list.length;
    }
    append(name, value) {
      needArgs(arguments.length, 2, "Failed to execute 'append' on 'URLSearchParams'");
      arrayPush(this.#list, [usv(name), usv(value)]);
      this.#update();
    }
    delete(name, value = undefined) {
      needArgs(arguments.length, 1, "Failed to execute 'delete' on 'URLSearchParams'");
      name = usv(name);
      if (value !== undefined) value = usv(value);
      const list = this.#list;
      for (let i = 0; i < list.length; ) {
        if (list[i][0] === name && (value === undefined || list[i][1] === value)) arraySplice(list, i, 1);
        else i++;
      }
      this.#update();
    }
    get(name) {
      needArgs(arguments.length, 1, "Failed to execute 'get' on 'URLSearchParams'");
      name = usv(name);
      const list = this.#list;
      for (let i = 0; i < list.length; i++) if (list[i][0] === name) return list[i][1];
      return null;
    }
    getAll(name) {
      needArgs(arguments.length, 1, "Failed to execute 'getAll' on 'URLSearchParams'");
      name = usv(name);
      const out = [];
      const list = this.#list;
      for (let i = 0; i < list.length; i++) if (list[i][0] === name) arrayPush(out, list[i][1]);
      return out;
    }
    has(name, value = undefined) {
      needArgs(arguments.length, 1, "Failed to execute 'has' on 'URLSearchParams'");
      name = usv(name);
      if (value !== undefined) value = usv(value);
      const list = this.#list;
      for (let i = 0; i < list.length; i++) if (list[i][0] === name && (value === undefined || list[i][1] === value)) return true;
      return false;
    }
    set(name, value) {
      needArgs(arguments.length, 2, "Failed to execute 'set' on 'URLSearchParams'");
      name = usv(name);
      value = usv(value);
      const list = this.#list;
      let found = false;
      for (let i = 0; i < list.length; ) {
        if (list[i][0] !== name) i++;
        else if (found) arraySplice(list, i, 1);
        else {
          list[i][1] = value;
          found = true;
          i++;
        }
      }
      if (!found) arrayPush(list, [name, value]);
      this.#update();
    }
    sort() {
      arraySort(this.#list, (a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      this.#update();
    }
    forEach(callback, thisArg = undefined) {
      if (typeof callback !== 'function') throw new TypeErrorCtor("Failed to execute 'forEach' on 'URLSearchParams': the callback is not a function");
      const list = this.#list;
      for (let i = 0; i < list.length; i++) apply(callback, thisArg, [list[i][1], list[i][0], this]);
    }
    *entries() {
      const list = this.#list;
      for (let i = 0; i < list.length; i++) yield [list[i][0], list[i][1]];
    }
    *keys() {
      const list = this.#list;
      for (let i = 0; i < list.length; i++) yield list[i][0];
    }
    *values() {
      const list = this.#list;
      for (let i = 0; i < list.length; i++) yield list[i][1];
    }
    [SymbolIterator]() {
      return this.entries();
    }
    toString() {
      return serializeQuery(this.#list);
    }
  }
  tag(URLSearchParams.prototype, 'URLSearchParams');

  // ---- URL: parsed and serialized by the host's WHATWG parser ----
  function parseURL(url, base) {
    return host('url.parse', base === undefined ? [url] : [url, base]);
  }
  function queryOf(search) {
    return search === '' ? '' : strSlice(search, 1);
  }
  class URL {
    #parts;
    #params = null;
    constructor(url, base = undefined) {
      needArgs(arguments.length, 1, "Failed to construct 'URL'");
      this.#parts = parseURL(usv(url), base === undefined ? undefined : usv(base));
    }
    static canParse(url, base = undefined) {
      needArgs(arguments.length, 1, "Failed to execute 'canParse' on 'URL'");
      try {
        parseURL(usv(url), base === undefined ? undefined : usv(base));
        return true;
      } catch (err) {
        return false;
      }
    }
    static parse(url, base = undefined) {
      needArgs(arguments.length, 1, "Failed to execute 'parse' on 'URL'");
      try {
        return new URL(url, base);
      } catch (err) {
        return null;
      }
    }
    static {
      urlSetQuery = (url, query) => {
        url.#parts = host('url.set', [url.#parts.href, 'search', query]);
      };
    }
    #set(part, value) {
      this.#parts = host('url.set', [this.#parts.href, part, usv(value)]);
      if ((part === 'href' || part === 'search') && this.#params !== null) paramsReset(this.#params, queryOf(this.#parts.search));
    }
    get href() {
      return this.#parts.href;
    }
    set href(value) {
      this.#set('href', value);
    }
    get origin() {
      return this.#parts.origin;
    }
    get protocol() {
      return this.#parts.protocol;
    }
    set protocol(value) {
      this.#set('protocol', value);
    }
    get username() {
      return this.#parts.username;
    }
    set username(value) {
      this.#set('username', value);
    }
    get password() {
      return this.#parts.password;
    }
    set password(value) {
      this.#set('password', value);
    }
    get host() {
      return this.#parts.host;
    }
    set host(value) {
      this.#set('host', value);
    }
    get hostname() {
      return this.#parts.hostname;
    }
    set hostname(value) {
      this.#set('hostname', value);
    }
    get port() {
      return this.#parts.port;
    }
    set port(value) {
      this.#set('port', value);
    }
    get pathname() {
      return this.#parts.pathname;
    }
    set pathname(value) {
      this.#set('pathname', value);
    }
    get search() {
      return this.#parts.search;
    }
    set search(value) {
      this.#set('search', value);
    }
    get searchParams() {
      if (this.#params === null) this.#params = paramsFor(this, queryOf(this.#parts.search));
      return this.#params;
    }
    get hash() {
      return this.#parts.hash;
    }
    set hash(value) {
      this.#set('hash', value);
    }
    toString() {
      return this.#parts.href;
    }
    toJSON() {
      return this.#parts.href;
    }
  }
  tag(URL.prototype, 'URL');

  // ---- crypto ----
  const MAX_DATA = 4 * 1024 * 1024;
  function dataOf(value, what) {
    const view = viewOf(value, what);
    if (taLength(view) > MAX_DATA) throw domError(what + ' is larger than ' + MAX_DATA + ' bytes (the sandbox limit)', 'NotSupportedError');
    return latin1(view);
  }
  const HASHES = { __proto__: null, 'SHA-1': 512, 'SHA-256': 512, 'SHA-384': 1024, 'SHA-512': 1024 };
  function algorithmName(algorithm) {
    if (algorithm !== null && typeof algorithm === 'object') {
      if (algorithm.name === undefined) throw new TypeErrorCtor('The algorithm has no name');
      return usv(algorithm.name);
    }
    return usv(algorithm);
  }
  function hashName(algorithm) {
    const name = toUpperCase(algorithmName(algorithm));
    if (!HASHES[name]) throw domError('Unrecognized algorithm name', 'NotSupportedError');
    return name;
  }
  function usagesOf(usages) {
    if (usages === null || typeof usages !== 'object') throw new TypeErrorCtor('The key usages are not a sequence');
    const out = [];
    for (const usage of usages) {
      const u = StringCtor(usage);
      if (u !== 'sign' && u !== 'verify') throw domError('Cannot create a key using the specified key usages.', 'SyntaxError');
      if (strIndexOf(arrayJoin(out, ','), u) < 0) arrayPush(out, u);
    }
    if (out.length === 0) throw domError('Usages cannot be empty when creating a key.', 'SyntaxError');
    return out;
  }

  const KEY_TOKEN = {};
  let keyOf;
  class CryptoKey {
    #raw;
    #extractable;
    #algorithm;
    #usages;
    constructor(token, raw, extractable, algorithm, usages) {
      if (token !== KEY_TOKEN) throw new TypeErrorCtor('Illegal constructor');
      this.#raw = raw;
      this.#extractable = extractable;
      this.#algorithm = freeze(algorithm);
      this.#usages = freeze(usages);
    }
    static {
      keyOf = (key) => {
        if (key === null || typeof key !== 'object' || !(#raw in key)) throw new TypeErrorCtor('The key is not a CryptoKey');
        return { raw: key.#raw, extractable: key.#extractable, algorithm: key.#algorithm, usages: key.#usages };
      };
    }
    get type() {
      return 'secret';
    }
    get extractable() {
      return this.#extractable;
    }
    get algorithm() {
      return this.#algorithm;
    }
    get usages() {
      return this.#usages;
    }
  }
  tag(CryptoKey.prototype, 'CryptoKey');
  function hmacKey(raw, hash, length, extractable, usages) {
    const bits = raw.length * 8;
    let size = bits;
    if (length !== undefined) {
      size = NumberCtor(length);
      if (!isSafeInteger(size) || size > bits || size <= bits - 8) throw domError('The key length does not match the key data', 'DataError');
    }
    if (bits === 0) throw domError('The key is empty', 'DataError');
    return new CryptoKey(KEY_TOKEN, raw, !!extractable, { name: 'HMAC', hash: freeze({ name: hash }), length: size }, usagesOf(usages));
  }
  function hmacParams(algorithm) {
    if (toUpperCase(algorithmName(algorithm)) !== 'HMAC') throw domError('Unrecognized algorithm name', 'NotSupportedError');
    if (algorithm === null || typeof algorithm !== 'object') throw new TypeErrorCtor('The HMAC parameters are missing their hash');
    return hashName(algorithm.hash);
  }
  function useKey(algorithm, key, usage) {
    if (toUpperCase(algorithmName(algorithm)) !== 'HMAC') throw domError('Unrecognized algorithm name', 'NotSupportedError');
    const k = keyOf(key);
    if (k.algorithm.name !== 'HMAC') throw domError('The key is not an HMAC key', 'InvalidAccessError');
    let allowed = false;
    for (let i = 0; i < k.usages.length; i++) if (k.usages[i] === usage) allowed = true;
    if (!allowed) throw domError('The key does not support the ' + usage + ' operation', 'InvalidAccessError');
    return { raw: k.raw, hash: k.algorithm.hash.name };
  }

  class SubtleCrypto {
    constructor(token) {
      if (token !== KEY_TOKEN) throw new TypeErrorCtor('Illegal constructor');
    }
    async digest(algorithm, data) {
      needArgs(arguments.length, 2, "Failed to execute 'digest' on 'SubtleCrypto'");
      const hash = hashName(algorithm);
      return bufferOfLatin1(host('crypto.digest', [hash], dataOf(data, 'The data')));
    }
    async importKey(format, keyData, algorithm, extractable, usages) {
      needArgs(arguments.length, 5, "Failed to execute 'importKey' on 'SubtleCrypto'");
      if (format !== 'raw') throw domError('Only the raw format is supported', 'NotSupportedError');
      const hash = hmacParams(algorithm);
      const raw = dataOf(keyData, 'The key data');
      if (raw.length > 65536) throw domError('The key is longer than 65536 bytes', 'DataError');
      return hmacKey(raw, hash, algorithm.length, extractable, usages);
    }
    async generateKey(algorithm, extractable, usages) {
      needArgs(arguments.length, 3, "Failed to execute 'generateKey' on 'SubtleCrypto'");
      const hash = hmacParams(algorithm);
      let bits = HASHES[hash];
      if (algorithm.length !== undefined) {
        bits = NumberCtor(algorithm.length);
        if (!isSafeInteger(bits) || bits <= 0 || bits > 65536 * 8) throw domError('The key length is not supported', 'OperationError');
      }
      const raw = host('crypto.random', [MathFloor((bits + 7) / 8)]);
      return hmacKey(raw, hash, algorithm.length === undefined ? undefined : bits, extractable, usages);
    }
    async exportKey(format, key) {
      needArgs(arguments.length, 2, "Failed to execute 'exportKey' on 'SubtleCrypto'");
      const k = keyOf(key);
      if (format !== 'raw') throw domError('Only the raw format is supported', 'NotSupportedError');
      if (!k.extractable) throw domError('The key is not extractable', 'InvalidAccessError');
      return bufferOfLatin1(k.raw);
    }
    async sign(algorithm, key, data) {
      needArgs(arguments.length, 3, "Failed to execute 'sign' on 'SubtleCrypto'");
      const k = useKey(algorithm, key, 'sign');
      const bytes = dataOf(data, 'The data');
      return bufferOfLatin1(host('crypto.hmacSign', [k.hash, k.raw.length, bytes.length], k.raw + bytes));
    }
    async verify(algorithm, key, signature, data) {
      needArgs(arguments.length, 4, "Failed to execute 'verify' on 'SubtleCrypto'");
      const k = useKey(algorithm, key, 'verify');
      const sig = dataOf(signature, 'The signature');
      const bytes = dataOf(data, 'The data');
      if (sig.length > 1024) return false;
      return host('crypto.hmacVerify', [k.hash, k.raw.length, bytes.length], k.raw + bytes + sig) === true;
    }
  }
  tag(SubtleCrypto.prototype, 'SubtleCrypto');
  const subtle = new SubtleCrypto(KEY_TOKEN);

  class Crypto {
    constructor(token) {
      if (token !== KEY_TOKEN) throw new TypeErrorCtor('Illegal constructor');
    }
    get subtle() {
      return subtle;
    }
    getRandomValues(array) {
      needArgs(arguments.length, 1, "Failed to execute 'getRandomValues' on 'Crypto'");
      const kind = array !== null && typeof array === 'object' ? taTag(array) : undefined;
      if (kind === undefined && attempt(dvBytes, array) === undefined) throw new TypeErrorCtor("Failed to execute 'getRandomValues' on 'Crypto': parameter 1 is not of type 'ArrayBufferView'");
      if (kind === undefined || !INTEGER_TYPED[kind]) throw domError("The provided ArrayBufferView is not an integer array type", 'TypeMismatchError');
      const n = taBytes(array);
      if (n > 65536) throw domError("The ArrayBufferView's byte length (" + n + ') exceeds the number of bytes of entropy available via this API (65536).', 'QuotaExceededError');
      const random = host('crypto.random', [n]);
      const view = new U8(taBuffer(array), taOffset(array), n);
      for (let i = 0; i < n; i++) view[i] = charCodeAt(random, i);
      return array;
    }
    randomUUID() {
      return host('crypto.randomUUID', []);
    }
  }
  tag(Crypto.prototype, 'Crypto');
  const crypto = new Crypto(KEY_TOKEN);

  // ---- structuredClone ----
  const UNCLONEABLE = { __proto__: null, '[object Promise]': 1, '[object WeakMap]': 1, '[object WeakSet]': 1, '[object WeakRef]': 1, '[object FinalizationRegistry]': 1, '[object Generator]': 1, '[object AsyncGenerator]': 1 };
  const ERROR_NAMES = { __proto__: null, Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError };
  function cloneError(what) {
    return domError(what + ' could not be cloned.', 'DataCloneError');
  }
  function copyBuffer(buffer, length) {
    const copy = new AB(length);
    taSet(new U8(copy), new U8(buffer, 0, length));
    return copy;
  }
  function structuredClone(value, options = undefined) {
    needArgs(arguments.length, 1, "Failed to execute 'structuredClone'");
    if (options !== undefined && options !== null && options.transfer !== undefined) {
      let count = 0;
      for (const item of options.transfer) count += item === undefined ? 0 : 1;
      if (count > 0) throw domError('Transferring is not supported in this sandbox', 'DataCloneError');
    }
    const memory = new MapCtor();
    const clone = (v) => {
      const type = typeof v;
      if (type === 'symbol') throw cloneError(StringCtor(v));
      if (type === 'function') throw cloneError('A function');
      if (v === null || type !== 'object') return v;
      if (mapHas(memory, v)) return mapGet(memory, v);
      let out;
      const remember = (o) => {
        mapSet(memory, v, o);
        return o;
      };
      if (isArray(v)) {
        out = remember(new ArrayCtor(v.length));
        for (const key of objectKeys(v)) defineProperty(out, key, { value: clone(v[key]), writable: true, enumerable: true, configurable: true });
        return out;
      }
      if (taTag(v) !== undefined) {
        const buffer = clone(taBuffer(v));
        return remember(new TYPED[taTag(v)](buffer, taOffset(v), taLength(v)));
      }
      let n = attempt(abBytes, v);
      if (n !== undefined) return remember(copyBuffer(v, n));
      n = attempt(dvBytes, v);
      if (n !== undefined) return remember(new DV(clone(dvBuffer(v)), dvOffset(v), n));
      let t = attempt(dateGetTime, v);
      if (t !== undefined) return remember(new DateCtor(t));
      t = attempt(reSource, v);
      if (t !== undefined && objectToString(v) === '[object RegExp]') return remember(new RegExpCtor(t, reFlags(v)));
      if (attempt(mapSize, v) !== undefined) {
        out = remember(new MapCtor());
        const entries = [];
        mapForEach(v, (value, key) => arrayPush(entries, [key, value]));
        for (const [key, value] of entries) mapSet(out, clone(key), clone(value));
        return out;
      }
      if (attempt(setSize, v) !== undefined) {
        out = remember(new SetCtor());
        const items = [];
        setForEach(v, (item) => arrayPush(items, item));
        for (const item of items) setAdd(out, clone(item));
        return out;
      }
      t = attempt(booleanValueOf, v);
      if (t !== undefined) return remember(new BooleanCtor(t));
      t = attempt(numberValueOf, v);
      if (t !== undefined) return remember(new NumberCtor(t));
      t = attempt(stringValueOf, v);
      if (t !== undefined) return remember(new StringCtor(t));
      t = attempt(bigintValueOf, v);
      if (t !== undefined) return remember(O(t));
      const kind = objectToString(v);
      if (UNCLONEABLE[kind]) throw cloneError(kind);
      if (kind === '[object Error]') {
        const name = v.name;
        const Ctor = typeof name === 'string' && ERROR_NAMES[name] ? ERROR_NAMES[name] : ErrorCtor;
        out = remember(new Ctor());
        const message = getOwnPropertyDescriptor(v, 'message');
        if (message !== undefined) define(out, 'message', StringCtor(v.message));
        const stack = getOwnPropertyDescriptor(v, 'stack');
        if (stack !== undefined && typeof v.stack === 'string') define(out, 'stack', v.stack);
        if (hasOwn(v, 'cause')) define(out, 'cause', clone(v.cause));
        return out;
      }
      out = remember({});
      for (const key of objectKeys(v)) defineProperty(out, key, { value: clone(v[key]), writable: true, enumerable: true, configurable: true });
      return out;
    };
    return clone(value);
  }

  // ---- timers: waited for by the host, called back in their own CPU slice ----
  let nextTimer = 1;
  const live = new MapCtor();
  function report(err) {
    try {
      consoleError('Uncaught error in a timer:', err);
    } catch (ignored) {
      // the console is the tenant's to break
    }
  }
  function fire(handler, args) {
    try {
      apply(handler, undefined, args);
    } catch (err) {
      report(err);
    }
  }
  function delayOf(timeout) {
    const d = NumberCtor(timeout);
    return d > 0 ? d : 0;
  }
  function checkHandler(handler, what) {
    if (typeof handler !== 'function') throw new TypeErrorCtor(what + ': the handler must be a function (code strings are not evaluated)');
  }
  function setTimeout(handler, timeout = 0, ...args) {
    checkHandler(handler, 'setTimeout');
    const id = nextTimer++;
    const waited = hostTimer('set', id, delayOf(timeout));
    mapSet(live, id, true);
    promiseThen(waited, () => {
      if (mapDelete(live, id)) fire(handler, args);
    });
    return id;
  }
  function setInterval(handler, timeout = 0, ...args) {
    checkHandler(handler, 'setInterval');
    const id = nextTimer++;
    const delay = delayOf(timeout);
    const tick = () => {
      if (!mapHas(live, id)) return;
      try {
        promiseThen(hostTimer('set', id, delay), tick);
      } catch (err) {
        mapDelete(live, id);
        report(err);
      }
      fire(handler, args);
    };
    promiseThen(hostTimer('set', id, delay), tick);
    mapSet(live, id, true);
    return id;
  }
  function clearTimeout(id = undefined) {
    const key = NumberCtor(id);
    if (mapDelete(live, key)) hostTimer('clear', key);
  }

  define(g, 'URL', URL);
  define(g, 'URLSearchParams', URLSearchParams);
  define(g, 'TextEncoder', TextEncoder);
  define(g, 'TextDecoder', TextDecoder);
  define(g, 'atob', atob);
  define(g, 'btoa', btoa);
  define(g, 'crypto', crypto);
  define(g, 'Crypto', Crypto);
  define(g, 'SubtleCrypto', SubtleCrypto);
  define(g, 'CryptoKey', CryptoKey);
  define(g, 'structuredClone', structuredClone);
  define(g, 'setTimeout', setTimeout);
  define(g, 'clearTimeout', clearTimeout);
  define(g, 'setInterval', setInterval);
  define(g, 'clearInterval', clearTimeout);
})`;
