/**
 * The client's version, sent on every request as `Plinth-Client`, and the Plinth server versions
 * it speaks to. A server that does not know a client this new answers 400
 * `client_version_unsupported` instead of silently mismatching (docs/client.md, "Versions").
 */
export const CLIENT_VERSION = '0.1.0';
/** Plinth server versions this client is built and tested against (a semver range). */
export const SUPPORTED_SERVERS = '>=0.1.0 <0.2.0';
