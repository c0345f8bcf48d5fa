/**
 * Which URLs an endpoint may have: absolute http(s), no credentials in it; in production (or
 * with WEBHOOK_ALLOW_PRIVATE_URLS=false) https only and a public host: the platform must not
 * become a way into its own network (cloud metadata, a database on loopback). Names are
 * checked again when they resolve, at every send (sender.ts), against DNS rebinding.
 */
import { isPublicHost } from '../../lib/public-network.js';
import { WebhookErrors } from './errors.js';

export function checkEndpointUrl(raw: string, allowPrivate: boolean): string {
  if (raw.length > 2048) throw WebhookErrors.webhook_url_invalid('The endpoint URL is too long.');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw WebhookErrors.webhook_url_invalid();
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
    throw WebhookErrors.webhook_url_invalid('The endpoint URL must use https.');
  }
  if (url.username || url.password) throw WebhookErrors.webhook_url_invalid('The endpoint URL must not carry credentials.');
  if (!allowPrivate && !isPublicHost(url.hostname)) {
    throw WebhookErrors.webhook_url_invalid('The endpoint URL must name a public host (not loopback or a private network).');
  }
  return url.toString();
}
