/**
 * The node's discovered OpenID Connect issuers (per-process state, built in boot.ts, listed in
 * context.ts; this file imports neither). One stable AuthorizationServer object per issuer for
 * an hour: oauth4webapi caches each issuer's JWKS by that object. Every request to a
 * provider goes through lib/public-fetch.ts: the issuer is a URL a tenant chose, so in
 * production it must be public https (no way into the platform's own network).
 */
import { LRUCache } from 'lru-cache';
import * as oauth from 'oauth4webapi';
import { publicFetch } from '../../lib/public-fetch.js';

export interface OidcDiscoveryOptions {
  allowPrivate: boolean;
  timeoutMs: number;
}

/** A provider answered with something other than a valid discovery document. */
export class DiscoveryFailed extends Error {}

const DISCOVERY_TTL_MS = 3600_000;

export class OidcDiscovery {
  private readonly servers = new LRUCache<string, oauth.AuthorizationServer>({ max: 2000, ttl: DISCOVERY_TTL_MS });
  private readonly inflight = new Map<string, Promise<oauth.AuthorizationServer>>();
  private readonly fetchImpl: ReturnType<typeof publicFetch>;

  constructor(readonly opts: OidcDiscoveryOptions) {
    this.fetchImpl = publicFetch({ allowPrivate: opts.allowPrivate, timeoutMs: opts.timeoutMs, maxBytes: 512 * 1024 });
  }

  /** Options for every oauth4webapi request to a tenant-chosen provider. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- one fetch serves every request kind of oauth4webapi
  http(): { [oauth.customFetch]: any; [oauth.allowInsecureRequests]?: boolean } {
    return {
      [oauth.customFetch]: this.fetchImpl,
      ...(this.opts.allowPrivate ? { [oauth.allowInsecureRequests]: true } : {}),
    };
  }

  /** The issuer's metadata (`/.well-known/openid-configuration`, its `issuer` checked). */
  async discover(issuer: string): Promise<oauth.AuthorizationServer> {
    const cached = this.servers.get(issuer);
    if (cached) return cached;
    const pending = this.inflight.get(issuer);
    if (pending) return pending;
    const p = this.load(issuer).finally(() => this.inflight.delete(issuer));
    this.inflight.set(issuer, p);
    return p;
  }

  /** A fixed OAuth 2.0 server (no discovery: Discord), one stable object per base URL. */
  fixed(key: string, make: () => oauth.AuthorizationServer): oauth.AuthorizationServer {
    const cached = this.servers.get(`fixed:${key}`);
    if (cached) return cached;
    const as = make();
    this.servers.set(`fixed:${key}`, as);
    return as;
  }

  /** Drops an issuer's metadata (e.g. after its settings changed). */
  forget(issuer: string): void {
    this.servers.delete(issuer);
  }

  private async load(issuer: string): Promise<oauth.AuthorizationServer> {
    let url: URL;
    try {
      url = new URL(issuer);
    } catch {
      throw new DiscoveryFailed('the issuer is not a URL');
    }
    try {
      const res = await oauth.discoveryRequest(url, { ...this.http(), algorithm: 'oidc' });
      const as = await oauth.processDiscoveryResponse(url, res);
      if (!as.authorization_endpoint || !as.token_endpoint || !as.jwks_uri) {
        throw new DiscoveryFailed('the discovery document lacks an authorization, token or jwks endpoint');
      }
      this.servers.set(issuer, as);
      return as;
    } catch (err) {
      if (err instanceof DiscoveryFailed) throw err;
      throw new DiscoveryFailed((err as Error).message);
    }
  }
}
