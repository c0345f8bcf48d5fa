/**
 * What an invocation is charged against its CPU budget, on a busy machine. A sandbox process
 * that waits for a core (or is stopped) in the middle of a slice of guest code spends wall time
 * but no CPU: charging that wait used up trivial functions' budgets under load (cpu_limit, or a
 * unit whose prelude "did not evaluate" and failed as `crashed`), seen in CI. Work the process
 * does inside the slice is still charged. The engine runs in this process here: a host call is
 * made synchronously inside the guest's slice, so blocking in it stands for the wait, and
 * spinning in it for work.
 */
import { describe, expect, it } from 'vitest';
import { Engine } from '../../../src/modules/functions/sandbox/engine.js';
import type { InvokeMessage } from '../../../src/modules/functions/sandbox/protocol.js';

const LIMITS = { cpuMs: 150, wallMs: 10_000, logBytes: 4096, resultBytes: 64 * 1024, hostCalls: 20 };
/** Two host calls, then a little work (the interrupt handler polls during it), or a loop. */
const TWO_CALLS = `var __plinthUnit = { handler: async () => { await fetch('https://example.com/'); await fetch('https://example.com/'); let x = 0; for (let i = 0; i < 2e5; i++) x += i; return 'ok'; } };`;
const CALL_THEN_LOOP = `var __plinthUnit = { handler: async () => { await fetch('https://example.com/'); for (;;) {} } };`;

/** Sleeps without using CPU, as a process does while it waits for a core. */
const waitWithoutCpu = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
/** Works for `ms` of wall time and of this process's CPU (other threads add to the second, a busy machine stretches the first). */
function spin(ms: number): void {
  const cpu = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  const cpuEnd = cpu() + ms;
  const wallEnd = performance.now() + ms;
  while (cpu() < cpuEnd || performance.now() < wallEnd);
}

let ids = 0;
function invoke(engine: Engine, source: string, hostCall: () => void) {
  const msg: InvokeMessage = {
    t: 'invoke',
    id: ++ids,
    unit: `u${ids}`,
    source,
    entry: 'handler',
    event: JSON.stringify({ event: null, env: {}, caller: null }),
    limits: LIMITS,
    memoryMb: 32,
  };
  return engine.run(msg, {
    call() {
      hostCall();
      return Promise.resolve(JSON.stringify({ value: 1 }));
    },
  });
}

/** An engine past its start: V8 compiles the engine's WebAssembly further on background threads for a while, which is CPU of this process. */
async function warmEngine(): Promise<Engine> {
  const engine = new Engine();
  await invoke(engine, TWO_CALLS, () => {});
  await new Promise((r) => setTimeout(r, 1500));
  return engine;
}

describe('CPU charged to an invocation', () => {
  it('a wait for a core inside a slice is not charged: two waits of 400 ms stay within a 150 ms budget', async () => {
    const out = await invoke(await warmEngine(), TWO_CALLS, () => waitWithoutCpu(400));
    expect(out).toMatchObject({ result: '"ok"' });
    if (out === 'need-source') throw new Error('unreachable');
    expect(out.cpuMs).toBeLessThan(100);
  });

  it('work inside a slice is charged: after 200 ms of CPU the function is stopped at its next poll, at once (not at its wall time)', async () => {
    const engine = await warmEngine();
    const started = performance.now();
    const out = await invoke(engine, CALL_THEN_LOOP, () => spin(200));
    const tookMs = performance.now() - started;
    if (out === 'need-source') throw new Error('unreachable');
    expect(tookMs).toBeLessThan(LIMITS.wallMs / 2);
    expect(out).toMatchObject({ failure: { kind: 'cpu_limit' } });
    expect(out.cpuMs).toBeGreaterThanOrEqual(200);
  });
});
