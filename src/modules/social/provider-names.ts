/**
 * The identity providers by name, and the node's authorization servers by provider (built in
 * providers.ts): context.ts lists those, and providers.ts takes the AppContext, so they live in
 * a file that imports neither (no import cycle).
 */
import type * as oauth from 'oauth4webapi';

export const PROVIDERS = ['github', 'google'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

export type OAuthServers = Record<ProviderName, oauth.AuthorizationServer>;
