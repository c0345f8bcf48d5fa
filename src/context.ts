/**
 * The composition root's product: everything a route or a worker task needs, built once at
 * start-up (src/boot.ts) or by the test harness. Domains take what they need from here.
 */
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Db } from './db/pool.js';
import type { Bus } from './db/bus.js';
import type { Clock } from './lib/clock.js';
import type { Limits, RateLimiter } from './lib/rate-limiter.js';
import type { ProjectCache } from './modules/projects/cache.js';
import type { JobQueue } from './worker/queue.js';

export interface Hooks {
  /** Run after a project's rows are deleted (e.g. remove its stored files). */
  projectDeleted: Array<(projectId: string) => Promise<void>>;
}

export interface AppContext {
  config: Config;
  db: Db;
  bus: Bus;
  clock: Clock;
  log: Logger;
  limiter: RateLimiter;
  limits: Limits;
  projects: ProjectCache;
  queue: JobQueue;
  hooks: Hooks;
}
