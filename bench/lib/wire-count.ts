/**
 * A TCP proxy in front of a PostgreSQL-protocol server (PostgreSQL or PgBouncer) that counts
 * what the client sends: connections opened, and frontend messages by type. It forwards every
 * byte unchanged and as it comes; the counting reads the stream beside it.
 *
 * A round trip is a message after which the client waits for ReadyForQuery: a simple Query
 * (`Q`) or a Sync (`S`) of the extended protocol (node-postgres never pipelines past one).
 * `P` (Parse) counts statements the server must parse and plan afresh (a named prepared
 * statement is parsed once per connection), `E` (Execute) statements run through the extended
 * protocol. Used by the pooler and replica benchmarks (bench/pooler.ts, bench/replica.ts) to
 * measure what a request costs the database; never in a load run (it is one more hop, in the
 * benchmark's own process).
 */
import net from 'node:net';

/** Frontend message types worth naming (protocol 3.0). */
const NAMES = new Map(Object.entries({ Q: 'query', P: 'parse', B: 'bind', E: 'execute', S: 'sync', D: 'describe', C: 'close', H: 'flush', X: 'terminate' }));

export interface WireCounts {
  /** Connections the client opened. */
  connections: number;
  /** Messages by name (query, parse, bind, execute, sync, describe, …; other types by letter). */
  messages: Map<string, number>;
  /** Round trips: simple queries plus syncs. */
  roundTrips: number;
}

export interface CountingProxy {
  /** `url` with its host and port replaced by the proxy's. */
  via(url: string): string;
  counts(): WireCounts;
  reset(): void;
  close(): Promise<void>;
}

/** SSLRequest and GSSENCRequest: another untyped startup message follows them. */
const NEGOTIATION = new Set([80877103, 80877104]);

export async function startCountingProxy(targetHost: string, targetPort: number): Promise<CountingProxy> {
  let connections = 0;
  let messages = new Map<string, number>();
  const sockets = new Set<net.Socket>();
  const count = (type: string) => {
    const name = NAMES.get(type) ?? type;
    messages.set(name, (messages.get(name) ?? 0) + 1);
  };

  const server = net.createServer((inbound) => {
    connections++;
    const outbound = net.connect(targetPort, targetHost);
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.once('close', () => sockets.delete(s));
    }
    let startup = true;
    /** Bytes of the current message still to pass over. */
    let skip = 0;
    /** A message header split across chunks. */
    let pending: Buffer = Buffer.alloc(0);
    inbound.on('data', (chunk: Buffer) => {
      outbound.write(chunk);
      const buf = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      let i = 0;
      for (;;) {
        if (skip > 0) {
          const n = Math.min(skip, buf.length - i);
          skip -= n;
          i += n;
          if (skip > 0) break;
        }
        if (startup) {
          // Untyped: length (itself included), then a protocol code.
          if (buf.length - i < 8) break;
          if (!NEGOTIATION.has(buf.readInt32BE(i + 4))) startup = false;
          skip = buf.readInt32BE(i);
        } else {
          // Typed: one byte, then the length (itself included).
          if (buf.length - i < 5) break;
          count(String.fromCharCode(buf[i]!));
          skip = 1 + buf.readInt32BE(i + 1);
        }
      }
      pending = i < buf.length ? Buffer.from(buf.subarray(i)) : Buffer.alloc(0);
    });
    outbound.pipe(inbound);
    inbound.on('end', () => outbound.end());
    inbound.on('error', () => outbound.destroy());
    outbound.on('error', () => inbound.destroy());
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port));
  });
  return {
    via(url) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    counts() {
      const m = new Map(messages);
      return { connections, messages: m, roundTrips: (m.get('query') ?? 0) + (m.get('sync') ?? 0) };
    },
    reset() {
      connections = 0;
      messages = new Map();
    },
    close() {
      return new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      });
    },
  };
}
