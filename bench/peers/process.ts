/** A benchmark server in its own process, pinned to one CPU when `taskset` is there. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { pin } from '../lib/pin.js';

export interface Server {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

async function waitForPort(child: ChildProcess, port: number, log: () => string): Promise<void> {
  for (let i = 0; i < 240; i++) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode}):\n${log()}`);
    const up = await fetch(`http://127.0.0.1:${port}/`).then(() => true, () => false);
    if (up) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`no server on :${port} after 60 s:\n${log()}`);
}

export async function startServer(name: string, args: string[], opts: { cwd?: string; port: number; cpu?: number; env?: Record<string, string> }): Promise<Server> {
  const child = spawn(process.execPath, args, { cwd: opts.cwd, env: { ...process.env, ...opts.env, PORT: String(opts.port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (b: Buffer) => void (output = (output + b.toString()).slice(-4000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  pin(child.pid!, opts.cpu);
  await waitForPort(child, opts.port, () => `${name}: ${output}`);
  return {
    url: `http://127.0.0.1:${opts.port}`,
    pid: child.pid!,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await Promise.race([once(child, 'exit'), new Promise((r) => setTimeout(r, 15_000))]); // a --cpu-prof profile is written on exit
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}
