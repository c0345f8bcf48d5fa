/** Shared pieces of the fake OAuth providers: a loopback HTTP server and PKCE checks. */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Handler = (req: IncomingMessage, url: URL, body: URLSearchParams, res: ServerResponse) => void | Promise<void>;

export interface Grant {
  clientId: string;
  redirectUri: string;
  codeChallenge: string | null;
  nonce: string | null;
  profile: Record<string, unknown>;
}

export async function startServer(handler: Handler): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const type = req.headers['content-type'] ?? '';
      const body = type.includes('json') ? new URLSearchParams(JSON.parse(raw || '{}')) : new URLSearchParams(raw);
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      Promise.resolve(handler(req, url, body, res)).catch((err) => {
        res.writeHead(500).end(String(err));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}` };
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

export function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

export const newCode = () => randomBytes(16).toString('hex');

export function pkceMatches(challenge: string | null, verifier: string | null): boolean {
  if (!challenge) return true;
  if (!verifier) return false;
  return createHash('sha256').update(verifier).digest('base64url') === challenge;
}

export function bearer(req: IncomingMessage): string | undefined {
  return /^bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
}

/** Answers the authorize endpoint as a consenting user: 302 back with a fresh code. */
export function authorize(url: URL, res: ServerResponse, grants: Map<string, Grant>, profile: Record<string, unknown>, error?: string): void {
  const redirect = new URL(url.searchParams.get('redirect_uri')!);
  redirect.searchParams.set('state', url.searchParams.get('state') ?? '');
  if (error) {
    redirect.searchParams.set('error', 'access_denied');
    redirect.searchParams.set('error_description', error);
  } else {
    const code = newCode();
    grants.set(code, {
      clientId: url.searchParams.get('client_id') ?? '',
      redirectUri: url.searchParams.get('redirect_uri') ?? '',
      codeChallenge: url.searchParams.get('code_challenge'),
      nonce: url.searchParams.get('nonce'),
      profile,
    });
    redirect.searchParams.set('code', code);
  }
  res.writeHead(302, { location: redirect.toString() }).end();
}
