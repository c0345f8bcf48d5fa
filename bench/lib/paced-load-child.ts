/**
 * The child side of bench/lib/paced-load.ts. Requests go out on node:http keep-alive agents
 * (one per kind, at most `connections` sockets), either in a closed loop (`connections`
 * workers, each sending its next request when the last is answered: the kind's peak) or open
 * loop at a fixed rate: a 5 ms tick sends whatever is due, so arrivals are spread evenly over
 * each second and a slow answer does not hold the next request back (its wait on the agent
 * counts in its latency, as a user's would). autocannon's `overallRate` is not used: each of
 * its connections sends its second's share back to back when the second starts, so a "half
 * the peak" load would be the full peak half of each second.
 */
import http from 'node:http';
import type { KindWindow, PacedCommand, PacedKind, PacedReply } from './paced-load.js';
import type { LoadRequest } from './load.js';

/** Requests of a paced kind waiting or in flight beyond this count as failures (the server stalled). */
const BACKLOG = 2000;

interface Answer {
  status: number;
  body: string;
}

class Window {
  count = 0;
  failures = 0;
  times: number[] = [];
  samples: string[] = [];
  take(): KindWindow {
    const t = this.times.sort((a, b) => a - b);
    const at = (q: number) => (t.length ? t[Math.min(t.length - 1, Math.floor(t.length * q))]! : 0);
    const w = { count: this.count, failures: this.failures, p50: at(0.5), p99: at(0.99), max: t.length ? t[t.length - 1]! : 0, samples: this.samples };
    this.count = 0;
    this.failures = 0;
    this.times = [];
    this.samples = [];
    return w;
  }
}

class Runner {
  readonly window = new Window();
  private readonly agent: http.Agent;
  private readonly base: URL;
  private stopped = false;
  /** Units (a request, or an upload's three) started and not finished. */
  private inFlight = 0;
  private sent = 0;
  private readonly started = performance.now();

  constructor(url: string, readonly kind: PacedKind) {
    this.base = new URL(url);
    this.agent = new http.Agent({ keepAlive: true, maxSockets: kind.connections });
  }

  /** Answers outside 2xx, errors and time-outs count as failures. */
  private request(r: LoadRequest): Promise<Answer | null> {
    const t0 = performance.now();
    return new Promise((resolve) => {
      const body = r.body === undefined ? undefined : Buffer.from(r.body);
      const req = http.request(
        {
          host: this.base.hostname,
          port: this.base.port,
          method: r.method ?? 'GET',
          path: r.path,
          agent: this.agent,
          headers: { ...(body && { 'content-type': 'application/json', 'content-length': String(body.length) }), ...this.kind.headers, ...r.headers },
          timeout: 30_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const answer = { status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') };
            const ok = answer.status >= 200 && answer.status < 300;
            this.record(performance.now() - t0, ok ? null : `${answer.status} ${answer.body.slice(0, 200)}`);
            resolve(ok ? answer : null);
          });
          res.on('error', (err) => {
            this.record(performance.now() - t0, `response error ${err.message}`);
            resolve(null);
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('timed out after 30 s')));
      req.on('error', (err) => {
        this.record(performance.now() - t0, `request error ${err.message}`);
        resolve(null);
      });
      req.end(body);
    });
  }

  private record(ms: number, failure: string | null): void {
    const w = this.window;
    w.count++;
    w.times.push(ms);
    if (failure !== null) {
      w.failures++;
      if (w.samples.length < 3) w.samples.push(failure);
    }
  }

  /** One unit of the kind: a request, a create and the purge of an older one, or the three steps of an upload. */
  private async once(): Promise<void> {
    if (!this.kind.upload) {
      const vs = this.kind.variants!;
      const v = vs[Math.floor(Math.random() * vs.length)]!;
      const answer = await this.request(v);
      if (this.kind.retire !== undefined && answer) await this.retireOldest(v.path, answer.body);
      return;
    }
    const body16 = 'x'.repeat(16);
    const asked = await this.request({ method: 'POST', path: '/api/storage/upload-request', body: JSON.stringify({ filename: 'soak.bin', contentType: 'application/octet-stream', size: 16 }) });
    if (!asked) return;
    const data = (JSON.parse(asked.body) as { data: { filePath: string; signedUrl: string } }).data;
    const u = new URL(data.signedUrl);
    const put = await this.request({ method: 'PUT', path: u.pathname + u.search, body: body16, headers: { 'content-type': 'application/octet-stream' } });
    if (!put) return;
    await this.request({ method: 'POST', path: '/api/storage/upload-confirm', body: JSON.stringify({ filePath: data.filePath, size: 16 }) });
  }

  /** Documents this kind created, oldest first (for `retire`). */
  private readonly created: string[] = [];

  private async retireOldest(collectionPath: string, createdBody: string): Promise<void> {
    let id: unknown;
    try {
      id = (JSON.parse(createdBody) as { _id?: unknown })._id; // the data API answers the document itself
    } catch {
      /* not JSON: counted below */
    }
    if (typeof id !== 'string') return this.record(0, `retire: no _id in the create's answer ${createdBody.slice(0, 100)}`);
    this.created.push(id);
    if (this.created.length <= this.kind.retire!) return;
    await this.request({ method: 'DELETE', path: `${collectionPath}/${this.created.shift()!}?hard=true` });
  }

  /** Closed loop: `connections` workers. */
  private async loop(): Promise<void> {
    while (!this.stopped) {
      this.inFlight++;
      await this.once().finally(() => this.inFlight--);
    }
  }

  start(): void {
    if (this.kind.rate === undefined) {
      for (let i = 0; i < this.kind.connections; i++) void this.loop();
    }
  }

  /** Open loop: called every tick, sends what is due by now (an upload is three requests, a retiring create two). */
  tick(now: number): void {
    if (this.stopped || this.kind.rate === undefined) return;
    const stepsPerUnit = this.kind.upload ? 3 : this.kind.retire !== undefined ? 2 : 1;
    const unitsPerSecond = this.kind.rate / stepsPerUnit;
    const due = Math.floor(((now - this.started) / 1000) * unitsPerSecond) - this.sent;
    for (let i = 0; i < due; i++) {
      this.sent++;
      if (this.inFlight >= BACKLOG) {
        this.record(0, `backlog: ${BACKLOG} requests of this kind already waiting`);
        continue;
      }
      this.inFlight++;
      void this.once().finally(() => this.inFlight--);
    }
  }

  /** Sends nothing more and waits for what is in flight (so the parent knows every write that was made). */
  async stop(): Promise<void> {
    this.stopped = true;
    while (this.inFlight > 0) await new Promise((r) => setTimeout(r, 10));
    this.agent.destroy();
  }
}

let runners: Runner[] = [];
let ticker: NodeJS.Timeout | undefined;

const windows = () => Object.fromEntries(runners.map((r) => [r.kind.name, r.window.take()]));

function send(m: PacedReply): void {
  process.send!(m);
}

process.on('message', (msg: PacedCommand) => {
  switch (msg.cmd) {
    case 'start':
      runners = msg.kinds.map((k) => new Runner(msg.url, k));
      for (const r of runners) r.start();
      ticker = setInterval(() => {
        const now = performance.now();
        for (const r of runners) r.tick(now);
      }, 5);
      send({ cmd: 'started' });
      break;
    case 'window':
      send({ cmd: 'window', kinds: windows() });
      break;
    case 'stop':
      clearInterval(ticker);
      void Promise.all(runners.map((r) => r.stop())).then(() => send({ cmd: 'stopped', kinds: windows() }));
      break;
  }
});

process.once('disconnect', () => process.exit(0));
