/**
 * Redis-backed limits that survive Redis going away. While Redis cannot be reached (refused,
 * reconnecting, or not answering within the command timeout) every call is counted by this
 * node's in-process limiter instead, so the API keeps serving and limits still hold, per node
 * (with N nodes a client may get up to N times a limit). Redis being lost and found again are
 * each reported once (`onChange`: one log line each), never per request.
 *
 * Recovery: ioredis reconnects by itself and says `ready`; from then on calls go to Redis again
 * (the windows it kept, or fresh ones after a restart). A Redis that stays connected but stops
 * answering is tried again by one call every `probeMs`.
 */
import type { Redis } from 'ioredis';
import type { LimitResult, LimiterStatus, RateLimiter } from './rate-limiter-types.js';

export interface LimiterChange {
  shared: boolean;
  /** Why Redis is not used (the first failure). */
  reason?: string;
  /** Back: how long the limits were per node. */
  downForMs?: number;
}

export class FallbackRateLimiter implements RateLimiter {
  private downSince: number | null = null;
  private lastFailure = 0;

  constructor(
    private readonly redis: Redis,
    private readonly primary: RateLimiter,
    private readonly fallback: RateLimiter,
    private readonly onChange: (change: LimiterChange) => void = () => {},
    private readonly probeMs = 5000,
  ) {
    // Without a listener ioredis prints every failed reconnection to stderr.
    redis.on('error', (err: Error) => this.failed(err));
    redis.on('close', () => this.failed(new Error('connection closed')));
    redis.on('ready', () => this.recovered());
  }

  hit(key: string, limit: number, windowSeconds: number): Promise<LimitResult> {
    return this.run((l) => l.hit(key, limit, windowSeconds));
  }

  release(key: string): Promise<void> {
    return this.run((l) => l.release(key));
  }

  reset(key: string): Promise<void> {
    return this.run((l) => l.reset(key));
  }

  status(): LimiterStatus {
    return this.downSince === null ? 'redis' : 'redis-down';
  }

  /** Waits (at most `ms`) for the first connection, so a healthy start is not reported as an outage. */
  async ready(ms: number): Promise<void> {
    if (this.redis.status === 'ready') return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.redis.off('ready', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.redis.once('ready', done);
    });
    if ((this.redis.status as string) !== 'ready') this.failed(new Error(`not connected (${this.redis.status})`));
  }

  async close(): Promise<void> {
    this.redis.removeAllListeners();
    this.redis.on('error', () => {});
    await this.primary.close();
  }

  private usable(): boolean {
    if (this.redis.status !== 'ready') return false;
    return this.downSince === null || Date.now() - this.lastFailure >= this.probeMs;
  }

  private async run<T>(call: (l: RateLimiter) => Promise<T>): Promise<T> {
    if (!this.usable()) return call(this.fallback);
    try {
      const result = await call(this.primary);
      this.recovered();
      return result;
    } catch (err) {
      this.failed(err);
      return call(this.fallback);
    }
  }

  private failed(err: unknown): void {
    this.lastFailure = Date.now();
    if (this.downSince !== null) return;
    this.downSince = this.lastFailure;
    this.onChange({ shared: false, reason: err instanceof Error ? err.message : String(err) });
  }

  private recovered(): void {
    if (this.downSince === null) return;
    const downForMs = Date.now() - this.downSince;
    this.downSince = null;
    this.onChange({ shared: true, downForMs });
  }
}
