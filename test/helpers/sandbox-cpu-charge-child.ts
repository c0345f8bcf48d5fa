/**
 * Runs one invocation in the function engine in this process and prints its outcome as JSON
 * (test/modules/functions/sandbox.cpu-charge.test.ts). Started with `--single-threaded`, as quiet
 * as a sandbox process: no background threads use CPU while the main thread blocks, so what the
 * invocation is charged is what the slice did. A host call is made synchronously inside the
 * guest's slice: blocking in it stands for a process waiting for a core, spinning for work.
 *
 *   node --single-threaded --import tsx test/helpers/sandbox-cpu-charge-child.ts wait|work
 */
import { Engine } from '../../src/modules/functions/sandbox/engine.js';
import type { InvokeMessage } from '../../src/modules/functions/sandbox/protocol.js';

const LIMITS = { cpuMs: 150, wallMs: 10_000, logBytes: 4096, resultBytes: 64 * 1024, hostCalls: 20 };
/** Two host calls, then a little work (the interrupt handler polls during it). */
const TWO_CALLS = `var __plinthUnit = { handler: async () => { await fetch('https://example.com/'); await fetch('https://example.com/'); let x = 0; for (let i = 0; i < 2e5; i++) x += i; return 'ok'; } };`;
/** One host call, then a loop. */
const CALL_THEN_LOOP = `var __plinthUnit = { handler: async () => { await fetch('https://example.com/'); for (;;) {} } };`;

/** Sleeps without using CPU, as a process does while it waits for a core. */
const waitWithoutCpu = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** Works for `ms` of wall time and of this process's CPU. */
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

const engine = new Engine();
await invoke(engine, TWO_CALLS, () => {}); // the engine's WebAssembly compiled and warm
const started = performance.now();
const out = process.argv[2] === 'wait' ? await invoke(engine, TWO_CALLS, () => waitWithoutCpu(400)) : await invoke(engine, CALL_THEN_LOOP, () => spin(200));
process.stdout.write(JSON.stringify({ out, tookMs: performance.now() - started }));
