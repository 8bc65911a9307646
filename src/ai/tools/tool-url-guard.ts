/**
 * SSRF rules for search-tool URLs: http(s) only, no credentials in the URL, and no loopback, private,
 * link-local or otherwise non-public address (in any notation, IPv4 carried in IPv6 included) unless the
 * tool's configuration allows it. Literal addresses are checked when the tool is built; host names are
 * checked on every connection, after DNS, so a name that later resolves to an internal address is refused too.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import ipaddr from 'ipaddr.js';
import { TollgateError } from '../errors';

/** Where IANA allocates global unicast IPv6; an address outside it is unassigned, deprecated or special. */
const GLOBAL_UNICAST_IPV6 = ipaddr.parseCIDR('2000::/3');
/** NAT64's well-known prefix (RFC 6052); its local-use neighbour 64:ff9b:1::/48 is not globally reachable. */
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');
/** The deprecated IPv4-compatible form ::a.b.c.d (RFC 4291 §2.5.5.1). */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

/** Network error code of a refused connection; shows up as `(ESSRF_BLOCKED)` in the tool's ConnectionError. */
export const BLOCKED_ADDRESS_CODE = 'ESSRF_BLOCKED';

/**
 * True for loopback, private, link-local, CGNAT, documentation, multicast and reserved addresses: any IPv4
 * address in a range ipaddr.js names (RFC 6890's special-purpose blocks), any IPv6 address outside plain
 * global unicast, and an IPv6 address that carries an IPv4 address (mapped, NAT64, 6to4, Teredo) when that
 * IPv4 address is one of these. Host names are not addresses: false (they are checked after DNS).
 */
export function isNonPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(bare)) return false;
  const parsed = ipaddr.parse(bare);
  if (parsed.kind() === 'ipv4') return parsed.range() !== 'unicast';
  const ipv6 = parsed as ipaddr.IPv6;
  const carried = carriedIpv4(ipv6);
  if (carried) return carried.some((ipv4) => ipv4.range() !== 'unicast');
  return ipv6.range() !== 'unicast' || !ipv6.match(GLOBAL_UNICAST_IPV6);
}

/**
 * The IPv4 addresses an IPv6 address stands for, where a translator or tunnel delivers to them: IPv4-mapped,
 * SIIT, NAT64 and the deprecated IPv4-compatible form (last 32 bits), 6to4 (bits 16-47), Teredo (server bits
 * 32-63, client the last 32 bits inverted). ipaddr.js reads the dotted `::a.b.c.d` as IPv4-mapped; its hex
 * form lands here as compatible, so both spellings are judged by the same IPv4 address (`::` and `::1` too:
 * 0.0.0.0 and 0.0.0.1 are not public).
 */
function carriedIpv4(address: ipaddr.IPv6): ipaddr.IPv4[] | undefined {
  const bytes = address.toByteArray();
  const at = (offset: number, mask = 0) => new ipaddr.IPv4(bytes.slice(offset, offset + 4).map((byte) => byte ^ mask));
  switch (address.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return [at(12)];
    case 'rfc6052':
      return address.match(NAT64_WELL_KNOWN) ? [at(12)] : undefined;
    case '6to4':
      return [at(2)];
    case 'teredo':
      return [at(4), at(12, 0xff)];
    default:
      return address.match(IPV4_COMPATIBLE) ? [at(12)] : undefined;
  }
}

/** `localhost` and `*.localhost` always mean loopback (RFC 6761). */
export function isLocalhostName(hostname: string): boolean {
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
      `${label}: points at a loopback, private or link-local address; set allow_private_network: true for a tool you run yourself ` +
        '(SEARXNG_ALLOW_PRIVATE_NETWORK=true for the one SEARXNG_URL registers)',
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
