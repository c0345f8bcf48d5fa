/**
 * What an invocation is charged against its CPU budget, on a busy machine. A sandbox process
 * that waits for a core (or is stopped) in the middle of a slice of guest code spends wall time
 * but no CPU: charging that wait used up trivial functions' budgets under load (cpu_limit, or a
 * unit whose prelude "did not evaluate" and failed as `crashed`), seen in CI. Work the process
 * does inside the slice is still charged, and a function stopped in a later slice ends at once.
 * The engine runs in a quiet child process (test/helpers/sandbox-cpu-charge-child.ts).
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../../..');
/** The invocation's wall time in the child. */
const WALL_MS = 10_000;

async function scenario(name: 'wait' | 'work'): Promise<{ out: { result?: string; failure?: { kind: string }; cpuMs: number }; tookMs: number }> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--single-threaded', '--import', 'tsx', 'test/helpers/sandbox-cpu-charge-child.ts', name], { cwd: ROOT, timeout: 60_000 });
  return JSON.parse(stdout);
}

describe('CPU charged to an invocation', () => {
  it('a wait for a core inside a slice is not charged: two waits of 400 ms stay within a 150 ms budget', async () => {
    const { out } = await scenario('wait');
    expect(out).toMatchObject({ result: '"ok"' });
    expect(out.cpuMs).toBeLessThan(100);
  });

  it('work inside a slice is charged: after 200 ms of CPU the function is stopped at its next poll, at once (not at its wall time)', async () => {
    const { out, tookMs } = await scenario('work');
    expect(tookMs).toBeLessThan(WALL_MS / 2);
    expect(out).toMatchObject({ failure: { kind: 'cpu_limit' } });
    expect(out.cpuMs).toBeGreaterThanOrEqual(200);
  });
});
