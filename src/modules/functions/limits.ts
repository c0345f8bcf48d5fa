/**
 * Per-invocation limits by kind (docs/functions.md "Limits"). Synchronous hooks sit in a
 * write's or a sign-in's path and get little time; HTTP functions answer a client; after-hooks
 * and schedules run in the job workers and may take a minute.
 */
import type { HostLimits } from './host.js';
import type { InvocationLimits } from './sandbox/protocol.js';
import type { FunctionKind } from './tables.js';

const COMMON = { logBytes: 64 * 1024 };

export const KIND_LIMITS: Record<FunctionKind, InvocationLimits> = {
  before: { ...COMMON, cpuMs: 1_000, wallMs: 5_000, resultBytes: 1024 * 1024, hostCalls: 50 },
  auth: { ...COMMON, cpuMs: 1_000, wallMs: 5_000, resultBytes: 256 * 1024, hostCalls: 50 },
  http: { ...COMMON, cpuMs: 10_000, wallMs: 30_000, resultBytes: 6 * 1024 * 1024, hostCalls: 200 },
  after: { ...COMMON, cpuMs: 60_000, wallMs: 120_000, resultBytes: 64 * 1024, hostCalls: 1_000 },
  schedule: { ...COMMON, cpuMs: 60_000, wallMs: 120_000, resultBytes: 64 * 1024, hostCalls: 1_000 },
};

/**
 * What the API process allows one invocation (host.ts), by kind: `plinth.mail.send` calls,
 * each one message and one slot of the project's monthly mail quota. Past it the call fails
 * with 429 `function_mail_limit`. Synchronous hooks sit in a write's or a sign-in's path and
 * may send a few; after-hooks and schedules do the mass mailings.
 */
export const KIND_HOST_LIMITS: Record<FunctionKind, HostLimits> = {
  before: { mails: 5 },
  auth: { mails: 5 },
  http: { mails: 20 },
  after: { mails: 200 },
  schedule: { mails: 200 },
};
