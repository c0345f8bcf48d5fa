/**
 * The one source of "now". Tests move it forward (token expiry, monthly counters) without
 * sleeping; production reads the wall clock.
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export class FakeClock implements Clock {
  constructor(private current = new Date()) {}
  now(): Date {
    return new Date(this.current);
  }
  set(date: Date): void {
    this.current = new Date(date);
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}

/** The UTC calendar month of a date, as "YYYY-MM": the key of every monthly counter. */
export function utcMonth(date: Date): string {
  return date.toISOString().slice(0, 7);
}
