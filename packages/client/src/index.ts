/**
 * @plinth/client: the core (auth + data). Realtime, files, mail and functions are their own
 * entry points (`@plinth/client/realtime`, `/files`, `/mail`, `/functions`) taking this client,
 * so an app that does not import them does not ship them.
 *
 * ```ts
 * import { createClient } from '@plinth/client';
 * import type { Schema } from './plinth-schema'; // written by `plinth types`
 * const plinth = createClient<Schema>({ url: 'https://api.example.com', apiKey: 'pk_live_…' });
 * await plinth.auth.signIn({ email, password });
 * const { items } = await plinth.collection('posts').where('views', 'gte', 10).sort('-createdAt').list();
 * ```
 */
import { Auth, type AuthOptions } from './auth.js';
import { Transport, type RequestOptions, type TransportOptions } from './core.js';
import { batch, Collection, type BatchOperation, type BatchResult, type SchemaMap, type WriteOptions } from './data.js';

export interface ClientOptions extends TransportOptions {
  auth?: AuthOptions;
}

export class PlinthClient<S extends SchemaMap = SchemaMap> {
  /** The transport shared by every feature (and the feature entry points). */
  readonly transport: Transport;
  readonly auth: Auth;

  constructor(opts: ClientOptions) {
    this.transport = new Transport(opts);
    this.auth = new Auth(this.transport, opts.auth);
    this.transport.tokens = this.auth;
  }

  /** A collection's queries and writes, typed by the schema map. */
  collection<C extends Extract<keyof S, string>>(name: C): Collection<S[C]> {
    return new Collection<S[C]>(this.transport, name);
  }

  /** An atomic batch across collections (docs/data.md "Atomic batch"). */
  batch(operations: BatchOperation<S>[], opts?: WriteOptions): Promise<BatchResult[]> {
    return batch<S>(this.transport, operations, opts);
  }

  /** Any API call with the client's key, session, retries and error handling: answers the envelope's `data`. */
  request<T = unknown>(opts: RequestOptions): Promise<T> {
    return this.transport.request<T>(opts);
  }
}

export function createClient<S extends SchemaMap = SchemaMap>(opts: ClientOptions): PlinthClient<S> {
  return new PlinthClient<S>(opts);
}

export { Auth } from './auth.js';
export type { AuthEvent, AuthListener, AuthOptions, MfaChallenge, OwnSession, Session, SignInOk, SignInResult, User } from './auth.js';
export { Transport, encodeQuery, randomId } from './core.js';
export type { QueryInit, QueryValue, RequestOptions, TokenSource, TransportOptions } from './core.js';
export { Collection, Query, etagOf } from './data.js';
export type {
  AggregateGroup,
  AggregateSpec,
  BatchOperation,
  BatchResult,
  ConditionalOptions,
  Doc,
  FieldName,
  Filter,
  Operator,
  Page,
  Patch,
  Ref,
  SchemaMap,
  SortKey,
  Stored,
  SystemFields,
  WriteOptions,
} from './data.js';
export { PlinthError, PreconditionFailedError, isPlinthError } from './errors.js';
export { localStorageStorage, memoryStorage } from './storage.js';
export type { TokenStorage } from './storage.js';
export { CLIENT_VERSION, SUPPORTED_SERVERS } from './version.js';
