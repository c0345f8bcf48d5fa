/**
 * Whether a backing service (the database, the storage store) answers, as this process last
 * saw it: its users report every failure that means "unreachable" and every success here.
 * `onChange` fires once when the service goes away (with the reason) and once when it is back
 * (with how long it was away and how many failures were seen meanwhile), so an outage costs
 * two log lines, not a stack per request.
 */

export interface AvailabilityChange {
  reachable: boolean;
  /** Why it is unreachable (the first failure): error code and message, no stack. */
  reason?: string;
  /** Back again: how long it was away, and how many failures were seen in between. */
  downForMs?: number;
  failures?: number;
}

export class Availability {
  private downSince: number | null = null;
  private failures = 0;

  constructor(private readonly onChange: (change: AvailabilityChange) => void = () => {}, private readonly now: () => number = Date.now) {}

  get reachable(): boolean {
    return this.downSince === null;
  }

  failed(err: unknown): void {
    this.failures++;
    if (this.downSince !== null) return;
    this.downSince = this.now();
    this.onChange({ reachable: false, reason: failureReason(err) });
  }

  succeeded(): void {
    if (this.downSince === null) return;
    const change = { reachable: true, downForMs: this.now() - this.downSince, failures: this.failures };
    this.downSince = null;
    this.failures = 0;
    this.onChange(change);
  }
}

/** A short reason for the log line: code and message (no stack, no connection string). */
export function failureReason(err: unknown): string {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  return [typeof code === 'string' ? code : null, typeof message === 'string' ? message : null].filter(Boolean).join(': ') || 'unknown';
}

/** Socket errors of a connection that could not be made, broke, or found no host. */
export const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE',
]);
