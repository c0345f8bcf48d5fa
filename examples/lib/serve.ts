/**
 * Serves an example's static frontend: its own files, the examples' shared browser modules
 * (examples/lib/web/) under `/lib/`, `@plinth/client` as `/client.js` (its core, realtime and
 * files, bundled by esbuild as an app's bundler would) and `/config.js` with the project's base
 * URL and publishable key. No framework server: what a static host would serve.
 */
import { build } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES = new Map([
  ['.html', 'text/html; charset=utf-8'],
  ['.js', 'text/javascript; charset=utf-8'],
  ['.css', 'text/css; charset=utf-8'],
  ['.svg', 'image/svg+xml'],
]);

export interface Served {
  url: string;
  close(): Promise<void>;
}

/** The examples' shared browser modules (the sign-in form), served under `/lib/`. */
const SHARED = fileURLToPath(new URL('./web', import.meta.url));

/** @plinth/client as one ES module (packages/client/src: the core, realtime and files). */
export async function clientModule(): Promise<string> {
  const out = await build({
    stdin: {
      contents: "export * from './index.ts'; export { realtime } from './realtime.ts'; export { files } from './files.ts';",
      resolveDir: fileURLToPath(new URL('../../packages/client/src', import.meta.url)),
      loader: 'ts',
    },
    bundle: true,
    format: 'esm',
    target: 'es2020',
    write: false,
    logLevel: 'silent',
  });
  return out.outputFiles[0]!.text;
}

export async function serveExample(dir: string, config: Record<string, unknown>, port = 0): Promise<Served> {
  const root = path.resolve(dir);
  const plinthClient = await clientModule();
  const server = createServer(async (req, res) => {
    const pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    if (pathname === '/client.js') return send(res, 200, TYPES.get('.js')!, plinthClient);
    if (pathname === '/config.js') return send(res, 200, TYPES.get('.js')!, `export default ${JSON.stringify(config)};\n`);
    const [dirOf, rest] = pathname.startsWith('/lib/') ? [SHARED, pathname.slice('/lib'.length)] : [root, pathname === '/' ? '/index.html' : pathname];
    const file = path.resolve(dirOf, '.' + rest);
    const type = TYPES.get(path.extname(file));
    if (!file.startsWith(dirOf + path.sep) || !type) return send(res, 404, 'text/plain', 'not found');
    try {
      return send(res, 200, type, await readFile(file));
    } catch {
      return send(res, 404, 'text/plain', 'not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

function send(res: import('node:http').ServerResponse, status: number, type: string, body: string | Buffer): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(body);
}
