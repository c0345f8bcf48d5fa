/**
 * A fake Resend API on 127.0.0.1 speaking the REST shapes the `resend` SDK uses: emails
 * (single, batch with strict/permissive validation, get), audiences/segments and their
 * contacts, broadcasts. Each API key is its own account. Honours `Idempotency-Key` as Resend
 * does: same key, same answer, nothing sent twice; the same key while its first request is still
 * in progress gets 409 `concurrent_idempotent_requests` (a retry, not a second message). Latency
 * and failures can be injected.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeEmail {
  id: string;
  key: string;
  from: string;
  to: string[];
  subject: string;
  html?: string;
  text?: string;
  last_event: string;
  created_at: string;
}

interface Failure {
  status: number;
  message: string;
  /** 'answer': reply with the status; 'drop': accept (and send!) the mail, then cut the connection. */
  mode: 'answer' | 'drop';
  path?: RegExp;
  /** The answer is held this long after the provider is done with the request (a slow way back). */
  holdMs?: number;
}

type Reply = { status: number; body: unknown };
type Json = Record<string, unknown>;

export class FakeResend {
  url = '';
  latencyMs = 0;
  readonly emails = new Map<string, FakeEmail>();
  readonly requests: Array<{ method: string; path: string; key: string; idempotencyKey?: string }> = [];
  readonly invalidKeys = new Set<string>();
  private readonly idempotent = new Map<string, Reply>();
  /** Idempotency keys whose first request has not been answered yet. */
  private readonly inProgress = new Set<string>();
  private readonly failures: Failure[] = [];
  private readonly audiences = new Map<string, { id: string; key: string; name: string; contacts: Map<string, Json> }>();
  private readonly broadcasts = new Map<string, Json & { key: string }>();
  private server = http.createServer((req, res) => void this.handle(req, res));

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** The next `times` matching requests fail (status + message), or are accepted then dropped. */
  failNext(f: Partial<Failure> & { times?: number } = {}): void {
    for (let i = 0; i < (f.times ?? 1); i++) {
      this.failures.push({ status: f.status ?? 500, message: f.message ?? 'Internal server error', mode: f.mode ?? 'answer', path: f.path, holdMs: f.holdMs });
    }
  }

  sentBy(key: string): FakeEmail[] {
    return [...this.emails.values()].filter((e) => e.key === key);
  }

  reset(): void {
    this.emails.clear();
    this.requests.length = 0;
    this.idempotent.clear();
    this.inProgress.clear();
    this.failures.length = 0;
    this.invalidKeys.clear();
    this.latencyMs = 0;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const idem = req.headers['idempotency-key'] as string | undefined;
    const path = (req.url ?? '/').split('?')[0]!;
    this.requests.push({ method: req.method!, path, key, idempotencyKey: idem });
    const slot = idem ? `${key} ${req.method} ${path} ${idem}` : undefined;
    if (slot && this.inProgress.has(slot)) {
      return send(res, { status: 409, body: { statusCode: 409, name: 'concurrent_idempotent_requests', message: 'Same idempotency key used while original request is still in progress.' } });
    }
    if (slot) this.inProgress.add(slot);
    let out: { reply: Reply; failure?: Failure };
    try {
      out = await this.answer(req, raw, key, path, slot);
    } finally {
      if (slot) this.inProgress.delete(slot);
    }
    // Done at the provider; the answer may still be slow on its way back.
    if (out.failure?.holdMs) await new Promise((r) => setTimeout(r, out.failure!.holdMs));
    if (out.failure?.mode === 'drop') return void res.socket?.destroy();
    send(res, out.reply);
  }

  private async answer(req: http.IncomingMessage, raw: string, key: string, path: string, slot: string | undefined): Promise<{ reply: Reply; failure?: Failure }> {
    if (this.latencyMs) await new Promise((r) => setTimeout(r, this.latencyMs));
    const failureAt = this.failures.findIndex((f) => !f.path || f.path.test(path));
    const failure = failureAt >= 0 ? this.failures.splice(failureAt, 1)[0] : undefined;
    if (failure?.mode === 'answer') return { reply: { status: failure.status, body: err(failure.status, failure.message) }, failure };
    let reply: Reply;
    if (!key.startsWith('re_') || this.invalidKeys.has(key)) reply = { status: 401, body: err(401, 'API key is invalid') };
    else {
      const memo = slot ? this.idempotent.get(slot) : undefined;
      reply = memo ?? this.route(req.method!, path, key, raw ? (JSON.parse(raw) as unknown) : undefined, req.headers);
      if (slot && !memo && reply.status < 500) this.idempotent.set(slot, reply);
    }
    return { reply, failure };
  }

  private route(method: string, path: string, key: string, body: unknown, headers: http.IncomingHttpHeaders): Reply {
    const parts = path.split('/').filter(Boolean).map((p) => (p === 'segments' ? 'audiences' : p));
    const [a, b, c, d] = parts;
    if (a === 'emails' && b === 'batch' && method === 'POST') return this.batch(key, body, headers['x-batch-validation'] === 'permissive');
    if (a === 'emails' && !b && method === 'POST') return this.sendOne(key, body as Json);
    if (a === 'emails' && b && method === 'GET') return this.getEmail(key, b);
    if (a === 'audiences') return this.audienceRoute(method, key, b, c, d, body as Json);
    if (a === 'broadcasts') return this.broadcastRoute(method, key, b, c, body as Json);
    return { status: 404, body: err(404, 'Route not found') };
  }

  private invalid(e: Json): string | null {
    if (typeof e.from !== 'string' || !e.from) return 'Missing `from` field.';
    if (!e.to || (Array.isArray(e.to) && e.to.length === 0)) return 'Missing `to` field.';
    if (typeof e.subject !== 'string' || !e.subject) return 'Missing `subject` field.';
    if ([e.to].flat().some((t) => typeof t !== 'string' || !t.includes('@') || t.includes('invalid'))) return 'Invalid `to` field.';
    return null;
  }

  private store(key: string, e: Json): string {
    const id = randomUUID();
    this.emails.set(id, {
      id, key, from: e.from as string, to: [e.to as string | string[]].flat(), subject: e.subject as string,
      html: e.html as string | undefined, text: e.text as string | undefined, last_event: 'sent', created_at: new Date().toISOString(),
    });
    return id;
  }

  private sendOne(key: string, e: Json): Reply {
    const bad = this.invalid(e ?? {});
    if (bad) return { status: 422, body: err(422, bad) };
    return { status: 200, body: { id: this.store(key, e) } };
  }

  private batch(key: string, body: unknown, permissive: boolean): Reply {
    if (!Array.isArray(body) || body.length === 0 || body.length > 100) return { status: 422, body: err(422, 'Batch must have 1 to 100 emails.') };
    const problems = body.map((e: Json) => this.invalid(e));
    if (!permissive && problems.some(Boolean)) return { status: 422, body: err(422, problems.find(Boolean)!) };
    const data = body.flatMap((e: Json, i) => (problems[i] ? [] : [{ id: this.store(key, e) }]));
    const errors = problems.flatMap((m, index) => (m ? [{ index, message: m }] : []));
    return { status: 200, body: permissive ? { data, errors } : { data } };
  }

  private getEmail(key: string, id: string): Reply {
    const e = this.emails.get(id);
    if (!e || e.key !== key) return { status: 404, body: err(404, 'Email not found') };
    const { key: _k, ...rest } = e;
    return { status: 200, body: { object: 'email', ...rest } };
  }

  private audienceRoute(method: string, key: string, id?: string, sub?: string, contactId?: string, body: Json = {}): Reply {
    if (!id && method === 'GET') {
      const data = [...this.audiences.values()].filter((x) => x.key === key).map(({ id: i, name }) => ({ id: i, name }));
      return { status: 200, body: { object: 'list', data } };
    }
    if (!id && method === 'POST') {
      if (typeof body.name !== 'string' || !body.name) return { status: 422, body: err(422, 'Missing `name` field.') };
      const aud = { id: randomUUID(), key, name: body.name, contacts: new Map<string, Json>() };
      this.audiences.set(aud.id, aud);
      return { status: 201, body: { object: 'segment', id: aud.id, name: aud.name } };
    }
    const aud = id ? this.audiences.get(id) : undefined;
    if (!aud || aud.key !== key) return { status: 404, body: err(404, 'Audience not found') };
    if (!sub && method === 'DELETE') {
      this.audiences.delete(aud.id);
      return { status: 200, body: { object: 'segment', id: aud.id, deleted: true } };
    }
    if (sub !== 'contacts') return { status: 404, body: err(404, 'Route not found') };
    if (!contactId && method === 'GET') return { status: 200, body: { object: 'list', data: [...aud.contacts.values()] } };
    if (!contactId && method === 'POST') {
      if (typeof body.email !== 'string') return { status: 422, body: err(422, 'Missing `email` field.') };
      const contact = { id: randomUUID(), email: body.email, first_name: body.first_name, last_name: body.last_name, unsubscribed: !!body.unsubscribed };
      aud.contacts.set(contact.id, contact);
      return { status: 201, body: { object: 'contact', id: contact.id } };
    }
    const contact = contactId ? aud.contacts.get(contactId) : undefined;
    if (!contact) return { status: 404, body: err(404, 'Contact not found') };
    if (method === 'PATCH') {
      for (const f of ['first_name', 'last_name', 'unsubscribed']) if (body[f] !== undefined) contact[f] = body[f];
      return { status: 200, body: { object: 'contact', id: contactId } };
    }
    aud.contacts.delete(contactId!);
    return { status: 200, body: { object: 'contact', contact: contactId, deleted: true } };
  }

  private broadcastRoute(method: string, key: string, id?: string, sub?: string, body: Json = {}): Reply {
    if (!id && method === 'POST') {
      const audienceId = (body.audience_id ?? body.segment_id) as string | undefined;
      if (!audienceId || !this.audiences.has(audienceId)) return { status: 422, body: err(422, 'Audience not found') };
      const b = { id: randomUUID(), key, audience_id: audienceId, from: body.from, subject: body.subject, html: body.html, status: 'draft', scheduled_at: null };
      this.broadcasts.set(b.id, b);
      return { status: 201, body: { id: b.id } };
    }
    if (!id && method === 'GET') {
      const data = [...this.broadcasts.values()].filter((x) => x.key === key).map(({ key: _k, ...rest }) => rest);
      return { status: 200, body: { object: 'list', data } };
    }
    const b = id ? this.broadcasts.get(id) : undefined;
    if (!b || b.key !== key) return { status: 404, body: err(404, 'Broadcast not found') };
    if (sub === 'send' && method === 'POST') {
      b.status = body.scheduled_at ? 'scheduled' : 'sent';
      b.scheduled_at = body.scheduled_at ?? null;
      return { status: 200, body: { id: b.id } };
    }
    if (method === 'DELETE') {
      this.broadcasts.delete(b.id as string);
      return { status: 200, body: { object: 'broadcast', id: b.id, deleted: true } };
    }
    const { key: _k, ...rest } = b;
    return { status: 200, body: { object: 'broadcast', ...rest } };
  }
}

function err(statusCode: number, message: string) {
  const name = statusCode === 404 ? 'not_found' : statusCode === 401 ? 'validation_error' : statusCode === 429 ? 'rate_limit_exceeded' : statusCode >= 500 ? 'internal_server_error' : 'validation_error';
  return { statusCode, name, message };
}

function send(res: http.ServerResponse, r: Reply): void {
  res.writeHead(r.status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(r.body));
}

export async function startFakeResend(): Promise<FakeResend> {
  return new FakeResend().start();
}
