/**
 * Fixed-window rate limiting with two stores: in-process memory (one node) and Redis (several
 * API nodes share the counts; per node again while Redis is away, see rate-limiter-fallback.ts).
 * `hit` counts one attempt and says whether it is allowed; `release` takes one back (an
 * attempt that turned out not to count).
 */
import { Redis } from 'ioredis';
import { tooManyRequests } from './errors.js';
import { FallbackRateLimiter, type LimiterChange } from './rate-limiter-fallback.js';
import type { LimitResult, LimiterStatus, RateLimiter } from './rate-limiter-types.js';

export type { LimitResult, LimiterStatus, RateLimiter } from './rate-limiter-types.js';


export class MemoryRateLimiter implements RateLimiter {
  private windows = new Map<string, { count: number; resetAt: number }>();
  constructor(private now: () => number = Date.now) {}

  async hit(key: string, limit: number, windowSeconds: number): Promise<LimitResult> {
    const now = this.now();
    let w = this.windows.get(key);
    if (!w || w.resetAt <= now) {
      if (this.windows.size > 100_000) this.sweep(now);
      w = { count: 0, resetAt: now + windowSeconds * 1000 };
      this.windows.set(key, w);
    }
    w.count++;
    return { allowed: w.count <= limit, remaining: Math.max(0, limit - w.count), retryAfterSeconds: (w.resetAt - now) / 1000 };
  }

  async release(key: string): Promise<void> {
    const w = this.windows.get(key);
    if (w && w.resetAt > this.now() && w.count > 0) w.count--;
  }

  async reset(key: string): Promise<void> {
    this.windows.delete(key);
  }

  status(): LimiterStatus {
    return 'memory';
  }

  async close(): Promise<void> {}

  private sweep(now: number): void {
    for (const [k, w] of this.windows) if (w.resetAt <= now) this.windows.delete(k);
  }
}

export class RedisRateLimiter implements RateLimiter {
  constructor(private redis: Redis, private prefix = 'plinth:rl:') {}

  async hit(key: string, limit: number, windowSeconds: number): Promise<LimitResult> {
    const k = this.prefix + key;
    const [[, count], [, ttl]] = (await this.redis
      .multi()
      .incr(k)
      .pttl(k)
      .exec()) as [[null, number], [null, number]];
    let ttlMs = ttl;
    if (ttl < 0) {
      await this.redis.pexpire(k, windowSeconds * 1000);
      ttlMs = windowSeconds * 1000;
    }
    return { allowed: count <= limit, remaining: Math.max(0, limit - count), retryAfterSeconds: ttlMs / 1000 };
  }

  async release(key: string): Promise<void> {
    // Only an existing window, and never below zero (a DECR on a missing key would create one
    // without expiry).
    await this.redis.eval(
      "if (tonumber(redis.call('get', KEYS[1]) or '0') > 0) then return redis.call('decr', KEYS[1]) end return 0",
      1,
      this.prefix + key,
    );
  }

  async reset(key: string): Promise<void> {
    await this.redis.del(this.prefix + key);
  }

  status(): LimiterStatus {
    return 'redis';
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

export interface LimiterOptions {
  /** `now` lets tests move the windows with their fake clock (memory store only). */
  now?: () => number;
  /** REDIS_COMMAND_TIMEOUT_MS: a Redis command not answered by then counts as Redis being away. */
  commandTimeoutMs?: number;
  /** Told once when Redis is lost (limits per node) and once when it is back (shared again). */
  onChange?: (change: LimiterChange) => void;
}

export function createRateLimiter(redisUrl?: string, opts: LimiterOptions = {}): RateLimiter & { ready?(ms: number): Promise<void> } {
  const memory = new MemoryRateLimiter(opts.now);
  if (!redisUrl) return memory;
  // No offline queue and a command timeout: while Redis is away a call fails at once (and is
  // counted in memory) instead of waiting for a reconnection.
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, commandTimeout: opts.commandTimeoutMs ?? 1000 });
  return new FallbackRateLimiter(redis, new RedisRateLimiter(redis), memory, opts.onChange);
}

/**
 * A named limit, scaled by RATE_LIMIT_SCALE (0 turns limits off, for benchmarks only).
 * `enforce` throws the 429 (with Retry-After) when the window is full.
 */
export class Limits {
  constructor(private limiter: RateLimiter, private scale: number) {}

  async enforce(key: string, limit: number, windowSeconds: number, message?: string): Promise<void> {
    if (this.scale === 0) return;
    const r = await this.limiter.hit(key, Math.max(1, Math.floor(limit * this.scale)), windowSeconds);
    if (!r.allowed) throw tooManyRequests(r.retryAfterSeconds, message);
  }

  /**
   * Limits FAILED attempts only (logins): `attempt` runs unless one of `limits` is full, and
   * each of them counts it only if it fails with an error `isFailure` accepts. Every attempt
   * takes its slots before it runs, so concurrent guesses cannot overshoot a limit; a success
   * (or an error that is no failure) gives them back, so an account's own logins never lock it.
   */
  async failures<T>(limits: FailureLimit[], isFailure: (err: unknown) => boolean, attempt: () => Promise<T>): Promise<T> {
    if (this.scale === 0) return attempt();
    const taken: string[] = [];
    const giveBack = () => Promise.all(taken.map((k) => this.limiter.release(k)));
    for (const l of limits) {
      const r = await this.limiter.hit(l.key, Math.max(1, Math.floor(l.limit * this.scale)), l.windowSeconds);
      taken.push(l.key);
      if (!r.allowed) {
        await giveBack(); // a refused attempt is no failure: it never ran
        throw tooManyRequests(r.retryAfterSeconds, l.message);
      }
    }
    try {
      const result = await attempt();
      await giveBack();
      return result;
    } catch (err) {
      if (!isFailure(err)) await giveBack();
      throw err;
    }
  }

  reset(key: string): Promise<void> {
    return this.limiter.reset(key);
  }
}

export interface FailureLimit {
  key: string;
  limit: number;
  windowSeconds: number;
  message?: string;
}
