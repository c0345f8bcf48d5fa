/**
 * A fake OpenAI-compatible provider (Groq) on 127.0.0.1: `POST <base>/chat/completions`.
 * Tests script the answers (model content, an HTTP status, a delay) and read back every
 * request, including the Authorization header, to assert which key was used.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeReply {
  /** The model's message content (returned as choices[0].message.content). */
  content?: string;
  /** HTTP status; defaults to 200. */
  status?: number;
  /** A raw JSON body (overrides `content`). */
  body?: unknown;
  headers?: Record<string, string>;
  /** Wait this long before answering (timeouts). */
  delayMs?: number;
}

export interface RecordedRequest {
  authorization: string | undefined;
  path: string;
  body: { model?: string; messages?: Array<{ role: string; content: string }>; response_format?: unknown };
}

export interface FakeGroq {
  /** The value for GROQ_BASE_URL. */
  baseUrl: string;
  requests: RecordedRequest[];
  /** Keys the fake answers with 401 invalid_api_key. */
  rejectKeys: Set<string>;
  /** Queue replies, used in order; when empty, `fallback` answers. */
  enqueue(...replies: FakeReply[]): void;
  fallback: FakeReply;
  /** Runs before each reply (e.g. to look at the database while the request is in flight). */
  onRequest?: (req: RecordedRequest) => Promise<void> | void;
  reset(): void;
  close(): Promise<void>;
}

const PATH = '/openai/v1/chat/completions';

function completion(content: string) {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    model: 'fake',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  };
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export async function startFakeGroq(): Promise<FakeGroq> {
  const queue: FakeReply[] = [];
  const fake: Omit<FakeGroq, 'baseUrl'> & { baseUrl: string } = {
    baseUrl: '',
    requests: [],
    rejectKeys: new Set(),
    enqueue: (...replies) => void queue.push(...replies),
    fallback: { content: '{"filters":[],"sort":[],"limit":20,"explanation":"Everything."}' },
    reset() {
      queue.length = 0;
      this.requests.length = 0;
      this.rejectKeys.clear();
      this.onRequest = undefined;
    },
    close: async () => {},
  };

  const server = http.createServer(async (req, res) => {
    const raw = await readBody(req);
    if (req.method !== 'POST' || req.url !== PATH) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"Unknown request URL"}}');
      return;
    }
    const recorded: RecordedRequest = { authorization: req.headers.authorization, path: req.url, body: JSON.parse(raw || '{}') };
    fake.requests.push(recorded);
    await fake.onRequest?.(recorded);
    const key = /^Bearer (.+)$/.exec(recorded.authorization ?? '')?.[1] ?? '';
    if (fake.rejectKeys.has(key)) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'Invalid API Key', type: 'invalid_request_error', code: 'invalid_api_key' } }));
      return;
    }
    const reply = queue.shift() ?? fake.fallback;
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (res.destroyed) return;
    res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
    res.end(JSON.stringify(reply.body ?? completion(reply.content ?? '{}')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  fake.baseUrl = `http://127.0.0.1:${port}/openai/v1`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}

/** The model content for a query-builder answer. */
export function queryAnswer(answer: Record<string, unknown>): FakeReply {
  return { content: JSON.stringify(answer) };
}
