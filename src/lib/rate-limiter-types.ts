/**
 * What a rate limiter is, apart from its stores (rate-limiter.ts, rate-limiter-fallback.ts), so
 * that the fallback store can implement it without importing the module that builds it.
 */

/** Where the counts live: this node's memory, Redis, or this node's memory because Redis is away. */
export type LimiterStatus = 'memory' | 'redis' | 'redis-down';

export interface LimitResult {
  allowed: boolean;
  remaining: number;
  retryAfterSeconds: number;
}

export interface RateLimiter {
  hit(key: string, limit: number, windowSeconds: number): Promise<LimitResult>;
  /** Un-counts one hit of the current window (never below zero, never opens a window). */
  release(key: string): Promise<void>;
  reset(key: string): Promise<void>;
  status(): LimiterStatus;
  close(): Promise<void>;
}
