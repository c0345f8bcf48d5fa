/**
 * Load generation in a child process: autocannon must not share the event loop of the server
 * it measures (it would steal the server's CPU and skew every ratio). Each request picks one of
 * the given variants at random (e.g. different document ids).
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { pin } from './pin.js';
import type { UploadScenario } from './upload-scenarios.js';

export interface LoadRequest {
  method?: string;
  path: string;
  body?: string;
  headers?: Record<string, string>;
}

export interface LoadOptions {
  /** Several URLs: the connections are spread over them in turn (several API nodes). */
  url: string | string[];
  connections?: number;
  seconds?: number;
  headers?: Record<string, string>;
  variants: LoadRequest[];
  /** Instead of variants: an upload flow (bench/lib/upload-scenarios.ts); rps counts each step. */
  uploads?: { scenario: UploadScenario; storageDir: string };
  /** Pin the load generator to this CPU (bench/lib/pin.ts). */
  cpu?: number;
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

const child = fileURLToPath(new URL('./load-child.ts', import.meta.url));

export function load(opts: LoadOptions): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const proc = fork(child, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    proc.once('message', (msg) => {
      resolve(msg as LoadResult);
      proc.kill();
    });
    pin(proc.pid!, opts.cpu);
    proc.once('error', reject);
    proc.once('exit', (code) => code && reject(new Error(`load generator exited with ${code}`)));
    proc.send(opts);
  });
}
