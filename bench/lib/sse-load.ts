/**
 * Realtime subscribers in separate processes (bench/lib/sse-load-child.ts): thousands of open
 * streams cannot live in the server's own process (each costs the server a file descriptor and
 * the client another, and both would share one event loop and one descriptor limit), so they
 * are spread over a few children holding raw sockets.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface StreamSpec {
  /** The project's id (tickets are asked once per project and child). */
  project: string;
  /** The project's publishable key. */
  apiKey: string;
}

export type ChildCommand =
  | { cmd: 'open'; url: string; collection: string; specs: StreamSpec[]; concurrency: number; writes: number }
  | { cmd: 'status' }
  | { cmd: 'latencies'; sent: Array<number | null> }
  | { cmd: 'close' };

export type ChildReply =
  | { cmd: 'opened'; count: number }
  | { cmd: 'failed'; error: string }
  | { cmd: 'status'; burst: number; lastBurstAt: number; latency: number; lastLatencyAt: number; failures: number }
  | { cmd: 'latencies'; histogram: Array<[number, number]>; first: number[] }
  | { cmd: 'closed' };

const childFile = fileURLToPath(new URL('./sse-load-child.ts', import.meta.url));

class Child {
  private readonly waiting: Array<(m: ChildReply) => void> = [];
  constructor(readonly proc: ChildProcess) {
    proc.on('message', (m: ChildReply) => this.waiting.shift()?.(m));
  }
  ask(cmd: ChildCommand): Promise<ChildReply> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.proc.send(cmd);
    });
  }
}

export interface Status {
  burst: number;
  lastBurstAt: number;
  latency: number;
  lastLatencyAt: number;
  failures: number;
}

export class SseLoad {
  private constructor(private readonly children: Child[]) {}

  /** `specs` spread over `processes` children, opened `concurrency` at a time in each; resolves when every stream had `ready`. */
  static async open(opts: { url: string; collection: string; specs: StreamSpec[]; processes: number; writes: number; concurrency?: number }): Promise<SseLoad> {
    const children = Array.from({ length: opts.processes }, () => new Child(fork(childFile, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })));
    const load = new SseLoad(children);
    const shares: StreamSpec[][] = children.map(() => []);
    opts.specs.forEach((s, i) => shares[i % children.length]!.push(s));
    const replies = await Promise.all(children.map((c, i) => c.ask({ cmd: 'open', url: opts.url, collection: opts.collection, specs: shares[i]!, concurrency: opts.concurrency ?? 50, writes: opts.writes })));
    const failed = replies.find((r) => r.cmd === 'failed');
    if (failed) {
      await load.close();
      throw new Error(`opening the streams failed: ${(failed as { error: string }).error}`);
    }
    return load;
  }

  async status(): Promise<Status> {
    const all = (await Promise.all(this.children.map((c) => c.ask({ cmd: 'status' })))) as Array<Extract<ChildReply, { cmd: 'status' }>>;
    return {
      burst: all.reduce((n, s) => n + s.burst, 0),
      lastBurstAt: Math.max(...all.map((s) => s.lastBurstAt)),
      latency: all.reduce((n, s) => n + s.latency, 0),
      lastLatencyAt: Math.max(...all.map((s) => s.lastLatencyAt)),
      failures: all.reduce((n, s) => n + s.failures, 0),
    };
  }

  /** Latencies (ms) from `sent[k]` (epoch ms of write k's answer) to each stream's event: percentiles over every stream, and over the first stream alone. */
  async latencies(sent: Array<number | null>): Promise<{ all: (p: number) => number; first: (p: number) => number; count: number }> {
    const replies = (await Promise.all(this.children.map((c) => c.ask({ cmd: 'latencies', sent })))) as Array<Extract<ChildReply, { cmd: 'latencies' }>>;
    const histogram = new Map<number, number>();
    for (const r of replies) for (const [b, n] of r.histogram) histogram.set(b, (histogram.get(b) ?? 0) + n);
    const buckets = [...histogram].sort((a, b) => a[0] - b[0]);
    const count = buckets.reduce((n, [, c]) => n + c, 0);
    const first = [...replies[0]!.first].sort((a, b) => a - b);
    return {
      count,
      all: (p) => {
        const want = Math.ceil((count * p) / 100);
        let seen = 0;
        for (const [b, n] of buckets) if ((seen += n) >= want) return b / 10;
        return NaN;
      },
      first: (p) => first[Math.min(first.length - 1, Math.floor((first.length * p) / 100))] ?? NaN,
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.children.map((c) => c.ask({ cmd: 'close' })));
    for (const c of this.children) c.proc.kill();
  }
}
