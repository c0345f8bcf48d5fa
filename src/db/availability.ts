/**
 * Whether the database answers, as this process last saw it: every connection failure that
 * means "unreachable" (errors.ts) and every success report here. `onChange` fires once when the
 * database goes away (with the reason) and once when it is back (with how long it was away and
 * how many failures were seen meanwhile), so an outage costs two log lines, not a stack per
 * request.
 */
import { unavailableReason } from './errors.js';

export interface AvailabilityChange {
  reachable: boolean;
  /** Why it is unreachable (the first failure): SQLSTATE or socket code and message. */
  reason?: string;
  /** Back again: how long it was away, and how many failures were seen in between. */
  downForMs?: number;
  failures?: number;
}

export class DbAvailability {
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
    this.onChange({ reachable: false, reason: unavailableReason(err) });
  }

  succeeded(): void {
    if (this.downSince === null) return;
    const change = { reachable: true, downForMs: this.now() - this.downSince, failures: this.failures };
    this.downSince = null;
    this.failures = 0;
    this.onChange(change);
  }
}
