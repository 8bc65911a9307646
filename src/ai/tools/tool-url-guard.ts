/**
 * SSRF rules for search-tool URLs: http(s) only, no credentials in the URL, and no loopback, private,
 * link-local or otherwise non-public address unless the tool's configuration allows it. Literal addresses
 * are checked when the tool is built; host names are checked on every connection, after DNS, so a name
 * that later resolves to an internal address is refused too.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { TollgateError } from '../errors';

/** Ranges no public search service lives in (RFC 6890 special-purpose blocks). */
const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/** Network error code of a refused connection; shows up as `(ESSRF_BLOCKED)` in the tool's ConnectionError. */
export const BLOCKED_ADDRESS_CODE = 'ESSRF_BLOCKED';

/** True for loopback, private, link-local, CGNAT, documentation, multicast and reserved addresses. */
export function isNonPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').split('%', 1)[0];
  const family = isIP(bare);
  if (family === 4) return NON_PUBLIC.check(bare, 'ipv4');
  if (family !== 6) return false;
  // IPv4-mapped IPv6 (::ffff:10.0.0.1, or its hex form ::ffff:a00:1) is the IPv4 address underneath.
  const mapped = /^::ffff:(.+)$/i.exec(bare);
  if (mapped) {
    const tail = mapped[1];
    if (isIP(tail) === 4) return NON_PUBLIC.check(tail, 'ipv4');
    const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(tail);
    if (hex) {
      const value = (parseInt(hex[1], 16) << 16) | parseInt(hex[2], 16);
      return NON_PUBLIC.check([24, 16, 8, 0].map((shift) => (value >>> shift) & 255).join('.'), 'ipv4');
    }
  }
  return NON_PUBLIC.check(bare, 'ipv6');
}

/** `localhost` and `*.localhost` always mean loopback (RFC 6761). */
function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * Checks a tool URL before anything is sent to it. `label` names the setting in messages
 * (e.g. `tools.web_search.url`); the URL itself is never echoed, since it may carry secrets.
 */
export function checkToolUrl(raw: string, allowPrivateNetwork: boolean, label: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TollgateError(`${label}: is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TollgateError(`${label}: must be an http:// or https:// URL`);
  if (url.username !== '' || url.password !== '') {
    throw new TollgateError(`${label}: must not contain credentials (user:password@); use the tool's api_key`);
  }
  if (!allowPrivateNetwork && (isLocalhostName(url.hostname) || isNonPublicAddress(url.hostname))) {
    throw new TollgateError(
      `${label}: points at a loopback, private or link-local address; set allow_private_network: true for a tool you run yourself`,
    );
  }
  return url;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for the connection pool: resolves as usual, then refuses the connection when any address the
 * name resolves to is non-public (checking every address stops a name from mixing public and internal ones).
 */
export function publicOnlyLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const blocked = addresses.find((entry) => isNonPublicAddress(entry.address));
    if (blocked || addresses.length === 0) {
      const refusal: NodeJS.ErrnoException = new Error('address refused by the tool URL guard');
      refusal.code = BLOCKED_ADDRESS_CODE;
      return callback(refusal, []);
    }
    if (options.all) return callback(null, addresses);
    return callback(null, addresses[0].address, addresses[0].family);
  });
}
