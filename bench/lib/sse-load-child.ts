/**
 * The child side of bench/lib/sse-load.ts: holds its share of realtime streams on raw TCP
 * sockets (no HTTP client object, no EventSource: a GET written by hand and a scan of the bytes
 * for `event: ` markers), so one process holds thousands of streams with little CPU and memory,
 * and the server's process keeps its own file descriptors.
 *
 * It counts `create` events by title: `b…` (a burst) and `w<k>` (paced writes, whose arrival
 * time it keeps per stream, in epoch milliseconds, for the latency from the write's commit).
 */
import net from 'node:net';
import type { ChildCommand, ChildReply, StreamSpec } from './sse-load.js';

const now = () => performance.timeOrigin + performance.now();

interface Stream {
  spec: StreamSpec;
  socket: net.Socket;
  buffer: string;
  headerDone: boolean;
  ready: boolean;
  arrivals: Float64Array;
}

let streams: Stream[] = [];
let writes = 0;
let burstCount = 0;
let lastBurstAt = 0;
let latencyCount = 0;
let lastLatencyAt = 0;
let failures = 0;
const tickets = new Map<string, { ticket: string; at: number }>();

function send(msg: ChildReply): void {
  process.send!(msg);
}

async function ticketOf(cmd: Extract<ChildCommand, { cmd: 'open' }>, spec: StreamSpec): Promise<string> {
  const cached = tickets.get(spec.project);
  if (cached && Date.now() - cached.at < 30_000) return cached.ticket;
  const res = await fetch(`${cmd.url}/api/realtime/ticket`, {
    method: 'POST',
    headers: { 'x-api-key': spec.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ subscriptions: [{ collection: cmd.collection }] }),
  });
  if (res.status !== 200) throw new Error(`ticket answered ${res.status}: ${await res.text()}`);
  const ticket = ((await res.json()) as { data: { ticket: string } }).data.ticket;
  tickets.set(spec.project, { ticket, at: Date.now() });
  return ticket;
}

/** Scans the complete events in the stream's buffer: `ready`, and `create` with its title. */
function scan(s: Stream): void {
  const buf = s.buffer;
  const last = buf.lastIndexOf('\n\n');
  if (last < 0) return;
  let pos = 0;
  for (;;) {
    const at = buf.indexOf('event: ', pos);
    if (at < 0 || at > last) break;
    pos = at + 7;
    if (buf.startsWith('create\n', pos)) {
      const t = buf.indexOf('"title":"', pos);
      if (t < 0 || t > last) continue;
      const c = buf.charCodeAt(t + 9);
      if (c === 98 /* b */) {
        burstCount++;
        lastBurstAt = now();
      } else if (c === 119 /* w */) {
        const k = parseInt(buf.slice(t + 10, buf.indexOf('"', t + 10)), 10);
        if (k >= 0 && k < s.arrivals.length && Number.isNaN(s.arrivals[k]!)) {
          s.arrivals[k] = now();
          latencyCount++;
          lastLatencyAt = now();
        }
      }
    } else if (buf.startsWith('ready\n', pos)) {
      s.ready = true;
    }
  }
  s.buffer = buf.slice(last + 2);
}

function open(cmd: Extract<ChildCommand, { cmd: 'open' }>, spec: StreamSpec, ticket: string): Promise<Stream> {
  const url = new URL(cmd.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    const s: Stream = { spec, socket, buffer: '', headerDone: false, ready: false, arrivals: new Float64Array(writes).fill(NaN) };
    socket.setNoDelay(true);
    socket.once('connect', () => {
      socket.write(`GET /api/realtime?ticket=${encodeURIComponent(ticket)} HTTP/1.1\r\nHost: ${url.host}\r\nAccept: text/event-stream\r\n\r\n`);
    });
    socket.on('data', (chunk: Buffer) => {
      s.buffer += chunk.toString('latin1');
      if (!s.headerDone) {
        const end = s.buffer.indexOf('\r\n\r\n');
        if (end < 0) return;
        if (!s.buffer.startsWith('HTTP/1.1 200')) {
          reject(new Error(`stream answered ${s.buffer.slice(0, s.buffer.indexOf('\r\n'))}: ${s.buffer.slice(end + 4, end + 300)}`));
          socket.destroy();
          return;
        }
        s.headerDone = true;
        s.buffer = s.buffer.slice(end + 4);
      }
      const wasReady = s.ready;
      scan(s);
      if (!wasReady && s.ready) resolve(s);
    });
    socket.on('error', (err) => {
      failures++;
      reject(err);
    });
    socket.on('close', () => {
      if (s.ready) failures++;
    });
  });
}

process.on('message', (msg: ChildCommand) => {
  void (async () => {
    switch (msg.cmd) {
      case 'open': {
        writes = msg.writes;
        const out: Stream[] = [];
        let next = 0;
        const worker = async () => {
          while (next < msg.specs.length) {
            const spec = msg.specs[next++]!;
            out.push(await open(msg, spec, await ticketOf(msg, spec)));
          }
        };
        try {
          await Promise.all(Array.from({ length: msg.concurrency }, worker));
          streams = out;
          send({ cmd: 'opened', count: out.length });
        } catch (err) {
          send({ cmd: 'failed', error: String(err) });
        }
        break;
      }
      case 'status':
        send({ cmd: 'status', burst: burstCount, lastBurstAt, latency: latencyCount, lastLatencyAt, failures });
        break;
      case 'latencies': {
        // every (stream, write) pair that arrived, as a histogram of 0.1 ms buckets; the first stream apart
        const histogram = new Map<number, number>();
        const first: number[] = [];
        streams.forEach((s, i) => {
          for (let k = 0; k < s.arrivals.length; k++) {
            const sent = msg.sent[k];
            const at = s.arrivals[k]!;
            if (sent === undefined || sent === null || Number.isNaN(at)) continue;
            const bucket = Math.max(0, Math.round((at - sent) * 10));
            histogram.set(bucket, (histogram.get(bucket) ?? 0) + 1);
            if (i === 0) first.push(at - sent);
          }
        });
        send({ cmd: 'latencies', histogram: [...histogram], first });
        break;
      }
      case 'close':
        for (const s of streams) s.socket.destroy();
        streams = [];
        send({ cmd: 'closed' });
        break;
    }
  })();
});
