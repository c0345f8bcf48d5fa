/**
 * A throwaway `redis-server` on a free loopback port, for tests that must stop and restart
 * Redis. `available` is false when the binary is not installed (tests then skip, saying so).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';

export const redisServerAvailable = spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;

export interface RedisServer {
  port: number;
  url: string;
  /** SIGKILL: the server vanishes without closing anything. */
  kill(): Promise<void>;
  /** SIGSTOP / SIGCONT: the server keeps its connections but stops answering. */
  pause(): void;
  resume(): void;
  /** Starts a fresh (empty) server on the same port. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as net.AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

async function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const exited = () => new Promise<void>((resolve) => (child && child.exitCode === null && child.signalCode === null ? child.once('exit', () => resolve()) : resolve()));
  const server: RedisServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
      for (let i = 0; i < 200 && !(await accepting(port)); i++) await new Promise((r) => setTimeout(r, 25));
      if (!(await accepting(port))) throw new Error('redis-server did not start');
    },
    async kill() {
      const done = exited();
      child?.kill('SIGKILL');
      await done;
    },
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
    async stop() {
      child?.kill('SIGCONT');
      await server.kill();
    },
  };
  await server.start();
  return server;
}
