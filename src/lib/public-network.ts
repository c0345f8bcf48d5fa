/**
 * Outbound requests to hosts a tenant chose (a project's own S3 endpoint) must not reach the
 * platform's private network: cloud metadata at 169.254.169.254, a database on loopback, other
 * services on 10.x. Host names are checked when they resolve, at connect time, so an answer
 * that changes after the settings were saved (DNS rebinding) is refused too; literal addresses
 * never go through a lookup and are checked by `isPublicHost`.
 */
import dns from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

const NOT_PUBLIC = new BlockList();
const V4: Array<[string, number]> = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
];
// 64:ff9b::/96 and 64:ff9b:1::/48 (NAT64, RFC 6052 and 8215) can carry any IPv4 address: refused whole. IPv4-mapped addresses
// (::ffff:0:0/96) are refused by `isPublicAddress` itself: in a BlockList that subnet would
// match every plain IPv4 address too.
const V6: Array<[string, number]> = [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8],
];
for (const [net, prefix] of V4) NOT_PUBLIC.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of V6) NOT_PUBLIC.addSubnet(net, prefix, 'ipv6');

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !NOT_PUBLIC.check(address, 'ipv4');
  return family === 6 && !isIpv4Mapped(address) && !NOT_PUBLIC.check(address, 'ipv6');
}

function isIpv4Mapped(v6: string): boolean {
  return new URL(`http://[${v6}]/`).hostname.startsWith('[::ffff:');
}

/** A URL host that may be public: a name other than localhost, or a public literal address. */
export function isPublicHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  if (isIP(host)) return isPublicAddress(host);
  return host !== 'localhost' && !host.endsWith('.localhost');
}

export class NonPublicAddressError extends Error {
  readonly code = 'ERR_NON_PUBLIC_ADDRESS';
  constructor(hostname: string) {
    super(`${hostname} resolves to an address outside the public internet`);
  }
}

type AllCallback = (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void;
type OneCallback = (err: NodeJS.ErrnoException | null, address: string, family: number) => void;

/** `lookup` for http(s).Agent: resolves as usual, and fails when any answer is not public. */
export const publicOnlyLookup = ((hostname: string, options: dns.LookupOptions, callback: AllCallback | OneCallback) => {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    const refused = !err && (addresses.length === 0 || addresses.some((a) => !isPublicAddress(a.address)));
    const failure = err ?? (refused ? new NonPublicAddressError(hostname) : null);
    if (options.all) return (callback as AllCallback)(failure, failure ? [] : addresses);
    const first = addresses?.[0];
    (callback as OneCallback)(failure, failure || !first ? '' : first.address, failure || !first ? 0 : first.family);
  });
}) as LookupFunction;
