/**
 * What a function may ask of Plinth, answered in the API process for the invocation the
 * sandbox is running (sandbox/pool.ts): `plinth.data` under the caller's identity and access
 * rules (or the service's, when the code asks for it explicitly), `plinth.mail` through the
 * same service as `POST /api/mail/send` (as the function's own project, never another), and
 * `fetch` to public addresses. Arguments arrive as JSON text from hostile code: parsed under
 * the one depth guard, bounded in size, and only the members each operation reads are used.
 */
import type { AppContext } from '../../context.js';
import { AppError } from '../../lib/errors.js';
import { FunctionErrors } from './errors.js';
import { jsonTooDeep } from '../../lib/json-depth.js';
import { publicFetch } from '../../lib/public-fetch.js';
import { callerReadAccess, callerWriteAccess, assertNotUsers, type Access, type Caller } from '../data/access.js';
import { parseListQuery } from '../data/query.js';
import { asWritten, countDocuments, getDocument, getDocumentJson, listDocuments, listDocumentsJson } from '../data/read-service.js';
import { createDocument, deleteDocument, restoreDocument, updateDocument } from '../data/write-service.js';
import { CollectionErrors } from '../collections/errors.js';
import { sendFromFunction } from './mail.js';
import type { HostAnswer } from './sandbox/pool.js';

/** Who a function acts for: the request's key and end user, or nobody (after-hooks, schedules). */
export interface FunctionCaller {
  keyKind: 'secret' | 'publishable';
  userId: string | null;
  /**
   * The custom claims of the caller's verified access token (JSON text), or none: `plinth.caller.claims`,
   * and the scope of the function's own `plinth.data` calls as the caller (`@auth.claims.*` in rules).
   */
  claims?: string | null;
  /** A before-hook's caller: its own writes run hooks one level deeper (before-hooks.ts stops the recursion). */
  hookDepth?: number;
  /** The client's commit position (Plinth-Commit-Position) on an HTTP function's request: its reads wait for it as the data API's do. */
  after?: string;
}

/** What one invocation may do besides its sandbox's own limits (limits.ts). */
export interface HostLimits {
  /** Calls to `plinth.mail.send` (each one message, one quota slot). */
  mails: number;
}

/** A value already serialized by the data API (its own JSON text, never a tenant's). */
class JsonText {
  constructor(readonly text: string) {}
}

const MAX_ARGS_BYTES = 2 * 1024 * 1024;
const FETCH_TIMEOUT_MS = 10_000;
const FETCH_MAX_BYTES = 2 * 1024 * 1024;
const FETCH_MAX_BODY = 1024 * 1024;

type Args = Record<string, unknown>;

function parseArgs(text: string): Args {
  if (text.length > MAX_ARGS_BYTES || jsonTooDeep(text)) throw FunctionErrors.function_host_arguments();
  const value: unknown = JSON.parse(text);
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Args) : {};
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The query object of `list`/`count`/`get` as the data API's query string would give it. */
function rawQuery(v: unknown): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (!v || typeof v !== 'object' || Array.isArray(v)) return out;
  for (const [k, value] of Object.entries(v)) {
    if (Array.isArray(value)) out[k] = value.map(String);
    else if (value !== undefined && value !== null) out[k] = String(value);
  }
  return out;
}

export function functionHost(ctx: AppContext, projectId: string, caller: FunctionCaller, limits: HostLimits) {
  let mailsSent = 0;
  const asCaller = (mode: unknown): Caller =>
    mode === 'service'
      ? { projectId, keyKind: 'secret', user: async () => null, judgesToken: () => false }
      : { projectId, keyKind: caller.keyKind, user: async () => (caller.userId ? { id: caller.userId, claims: caller.claims ?? null } : null), judgesToken: () => false };
  // Read replicas: the function's reads follow the data API's rules (docs/scaling.md), and after
  // its own write they read at least that far, even on a node without an after-write window.
  let after = caller.after;
  const fetchPublic = publicFetch({ allowPrivate: ctx.config.functions.allowPrivateFetch, timeoutMs: FETCH_TIMEOUT_MS, maxBytes: FETCH_MAX_BYTES });

  async function data(a: Args): Promise<unknown> {
    const name = str(a.collection);
    assertNotUsers(name);
    const col = await ctx.collections.get(projectId, name);
    if (!col) throw CollectionErrors.collection_not_found();
    const who = asCaller(a.mode);
    const deep = (access: Access): Access => (caller.hookDepth ? { ...access, hookDepth: caller.hookDepth } : access);
    const readAs = async () => {
      const access = deep(await callerReadAccess(who, col));
      return after ? { ...access, after } : access;
    };
    const writeAs = async () => deep(await callerWriteAccess(who, col));
    const wrote = <T>(result: T): T => {
      after = ctx.db.replicas?.positionOf(projectId) ?? after;
      return result;
    };
    const limit = async () => (await ctx.projects.cachedById(projectId))?.plan.databaseBytes ?? 0;
    switch (a.op) {
      case 'get': {
        // As the data API answers it: JSON text straight from the row when no field is picked
        // or populated, never parsed and serialized again on its way to the sandbox.
        const q = parseListQuery(rawQuery(a.query));
        return asWritten(q) ? new JsonText((await getDocumentJson(ctx, col, await readAs(), str(a.id), q)).json) : getDocument(ctx, col, await readAs(), str(a.id), q);
      }
      case 'list': {
        const q = parseListQuery(rawQuery(a.query));
        return asWritten(q) ? new JsonText(await listDocumentsJson(ctx, col, await readAs(), q)) : listDocuments(ctx, col, await readAs(), q);
      }
      case 'count':
        return { count: await countDocuments(ctx, col, await readAs(), parseListQuery(rawQuery(a.query))) };
      case 'create':
        return wrote(await createDocument(ctx, col, await writeAs(), a.data, await limit()));
      case 'update':
        return wrote(await updateDocument(ctx, col, await writeAs(), str(a.id), a.data, await limit()));
      case 'delete':
        return wrote(await deleteDocument(ctx, col, await writeAs(), str(a.id), a.hard === true));
      case 'restore':
        return wrote(await restoreDocument(ctx, col, await writeAs(), str(a.id)));
      default:
        throw FunctionErrors.function_host_unknown('Unknown data operation.');
    }
  }

  async function fetchOut(a: Args): Promise<unknown> {
    const headers: Record<string, string> = {};
    if (a.headers && typeof a.headers === 'object' && !Array.isArray(a.headers)) {
      for (const [k, v] of Object.entries(a.headers)) if (typeof v === 'string' && /^[A-Za-z0-9-]{1,100}$/.test(k)) headers[k.toLowerCase()] = v.slice(0, 8192);
    }
    const body = typeof a.body === 'string' ? a.body : undefined;
    if (body !== undefined && Buffer.byteLength(body) > FETCH_MAX_BODY) throw FunctionErrors.function_host_arguments('The request body is too large.');
    const method = typeof a.method === 'string' && /^[A-Z]{3,7}$/.test(a.method.toUpperCase()) ? a.method.toUpperCase() : 'GET';
    let res: Response;
    try {
      res = await fetchPublic(str(a.url), { method, headers, body });
    } catch (err) {
      throw FunctionErrors.function_fetch_failed(`fetch failed: ${err instanceof Error ? err.message : 'refused'}`);
    }
    return { status: res.status, statusText: res.statusText, headers: Object.fromEntries(res.headers.entries()), body: await res.text() };
  }

  /** One message, as POST /api/mail/send would queue it for this project's secret key. */
  async function mail(a: Args): Promise<unknown> {
    // Counted before anything else, so a function cannot spend more by failing (a burst of
    // concurrent sends counts each one: the counter moves before the first await).
    mailsSent += 1;
    if (mailsSent > limits.mails) throw FunctionErrors.function_mail_limit(`A function of this kind sends at most ${limits.mails} mails per invocation.`);
    return sendFromFunction(ctx, projectId, a.message, a.idempotencyKey);
  }

  return async (name: string, argsText: string): Promise<HostAnswer> => {
    try {
      const args = parseArgs(argsText);
      if (name === 'data') {
        const value = await data(args);
        return value instanceof JsonText ? { json: value.text } : { value };
      }
      if (name === 'mail') return { value: await mail(args) };
      if (name === 'fetch') return { value: await fetchOut(args) };
      throw FunctionErrors.function_host_unknown(`plinth has no ${name.slice(0, 50)}.`);
    } catch (err) {
      if (err instanceof AppError) return { error: { code: err.code, message: err.message, status: err.status } };
      if (err instanceof SyntaxError) return { error: { code: 'function_host_arguments', message: FunctionErrors.function_host_arguments().message, status: 400 } };
      ctx.log.error({ err, projectId, call: name.slice(0, 50) }, 'function host call failed');
      return { error: { code: 'internal_error', message: 'The call failed.', status: 500 } };
    }
  };
}
