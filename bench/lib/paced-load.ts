/**
 * Long-running mixed load in child processes (bench/lib/paced-load-child.ts), for the soak
 * benchmark: each kind of request closed-loop (its peak) or open-loop at a fixed rate (evenly
 * spread arrivals: the child's header says why not autocannon's `overallRate`), running until
 * stopped, with the answers counted in windows that the
 * parent closes (`window()`: count, failures and latency percentiles per kind since the last
 * call). As bench/lib/load.ts, the load never shares the measured server's event loop; the kinds
 * are spread over `processes` children so that one generator's own loop does not decide the
 * latencies it reports.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { LoadRequest } from './load.js';

export interface PacedKind {
  name: string;
  /** Connections (closed-loop) or the most a paced kind may hold (autocannon lowers it to the rate). */
  connections: number;
  /** Requests per second over all its connections; undefined: as fast as it is answered. */
  rate?: number;
  headers?: Record<string, string>;
  /** Each request picks one at random (as bench/lib/load.ts). */
  variants?: LoadRequest[];
  /** Instead of variants: the three-step upload (request, 16-byte PUT to the signed URL, confirm); each step counts. */
  upload?: true;
  /**
   * For a kind that creates documents (a POST to `/api/data/:c`): once more than this many of
   * the documents it created exist, each create is followed by the purge of the oldest
   * (`DELETE /api/data/:c/:id?hard=true`), so the collection keeps its size however long the
   * load runs; each step counts, and the kind's rate is of requests, as for an upload.
   */
  retire?: number;
}

export interface KindWindow {
  count: number;
  failures: number;
  p50: number;
  p99: number;
  max: number;
  /** The first few failures' status and body (or error), to say why. */
  samples: string[];
}

export type PacedCommand =
  | { cmd: 'start'; url: string; kinds: PacedKind[] }
  | { cmd: 'window' }
  | { cmd: 'stop' };

export type PacedReply =
  | { cmd: 'started' }
  | { cmd: 'window'; kinds: Record<string, KindWindow> }
  | { cmd: 'stopped'; kinds: Record<string, KindWindow> };

const childFile = fileURLToPath(new URL('./paced-load-child.ts', import.meta.url));

class Child {
  private readonly waiting: Array<(m: PacedReply) => void> = [];
  constructor(readonly proc: ChildProcess) {
    proc.on('message', (m: PacedReply) => this.waiting.shift()?.(m));
  }
  ask(cmd: PacedCommand): Promise<PacedReply> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.proc.send(cmd);
    });
  }
}

export class PacedLoad {
  private constructor(private readonly children: Child[]) {}

  /** Starts every kind now, spread round-robin over `processes` children. */
  static async start(url: string, kinds: PacedKind[], processes = 2): Promise<PacedLoad> {
    const n = Math.max(1, Math.min(processes, kinds.length));
    const children = Array.from({ length: n }, () => new Child(fork(childFile, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })));
    for (const c of children) {
      c.proc.once('exit', (code) => {
        if (code) console.error(`paced load generator ${c.proc.pid} exited with ${code}`);
      });
    }
    await Promise.all(children.map((c, i) => c.ask({ cmd: 'start', url, kinds: kinds.filter((_, k) => k % n === i) })));
    return new PacedLoad(children);
  }

  /** Every kind's answers since the last window (or the start). */
  async window(): Promise<Record<string, KindWindow>> {
    const replies = await Promise.all(this.children.map((c) => c.ask({ cmd: 'window' })));
    return Object.assign({}, ...replies.map((r) => (r as { kinds: Record<string, KindWindow> }).kinds));
  }

  /** Stops every kind; the answers since the last window. */
  async stop(): Promise<Record<string, KindWindow>> {
    const replies = await Promise.all(this.children.map((c) => c.ask({ cmd: 'stop' })));
    for (const c of this.children) c.proc.kill();
    return Object.assign({}, ...replies.map((r) => (r as { kinds: Record<string, KindWindow> }).kinds));
  }
}
