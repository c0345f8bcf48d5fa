/** Pinning processes to one CPU with `taskset` (Linux), so a server and its load never share a core. */
import { spawnSync } from 'node:child_process';

export const hasTaskset = spawnSync('taskset', ['-V'], { stdio: 'ignore' }).status === 0;

/** Pins a running process, all its threads, to `cpu` (nothing when undefined or without taskset). */
export function pin(pid: number, cpu: number | undefined): void {
  if (cpu === undefined || !hasTaskset) return;
  spawnSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
}
