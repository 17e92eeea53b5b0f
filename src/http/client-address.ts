/**
 * The address a webhook delivery comes from, for the receiver's per-source limit: the socket's,
 * or, with `TRUST_PROXY`, the one the trusted proxies in front of the receiver name in
 * `X-Forwarded-For` (or `Forwarded`, RFC 7239, when there is no `X-Forwarded-For`).
 *
 * Written here rather than taken from `proxy-addr` (Express's, which does the same walk) because it
 * is not among the project's dependencies; node:net's BlockList does the address-range matching.
 *
 * The walk starts at the socket and goes back through the forwarded addresses, the nearest first:
 * a hop count N trusts the N nearest hops (the client is the address N steps back); address ranges
 * trust every hop inside them (the client is the first address outside them). Either way, what a
 * client writes in the header itself lies beyond the trusted hops and is never taken.
 */
import { BlockList, isIP, isIPv4, isIPv6 } from 'node:net';

export type TrustProxy = { hops: number } | { ranges: BlockList; text: string } | undefined;

/** The longest chain of forwarded addresses read: a longer header is cut to its nearest ones. */
const MAX_HOPS = 32;

/** `::ffff:1.2.3.4` is 1.2.3.4; anything else as it is. */
function plain(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped?.[1] ?? address;
}

/** One forwarded address without its port or brackets; undefined when it is not an IP address. */
function forwardedAddress(raw: string): string | undefined {
  let value = raw.trim();
  if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(value);
  if (bracketed?.[1]) value = bracketed[1];
  else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(value)) value = value.slice(0, value.lastIndexOf(':'));
  return isIP(value) === 0 ? undefined : plain(value);
}

/** The forwarded addresses, the nearest hop first. */
function forwardedChain(headers: Record<string, string | string[] | undefined>): Array<string | undefined> {
  const join = (h: string | string[] | undefined) => (Array.isArray(h) ? h.join(',') : h);
  const xff = join(headers['x-forwarded-for']);
  let chain: Array<string | undefined>;
  if (xff !== undefined) chain = xff.split(',').map(forwardedAddress);
  else {
    const forwarded = join(headers.forwarded);
    if (forwarded === undefined) return [];
    chain = forwarded.split(',').map((element) => {
      const pair = element
        .split(';')
        .map((p) => p.trim())
        .find((p) => p.toLowerCase().startsWith('for='));
      return pair === undefined ? undefined : forwardedAddress(pair.slice(4));
    });
  }
  return chain.reverse().slice(0, MAX_HOPS);
}

/** The client's address under the trust set; the socket's when nothing is trusted. */
export function clientAddress(
  socketAddress: string | undefined,
  headers: Record<string, string | string[] | undefined>,
  trust: TrustProxy,
): string {
  const socket = plain(socketAddress ?? '?');
  if (!trust) return socket;
  const chain = forwardedChain(headers);
  let client = socket;
  for (let hop = 0; hop < chain.length; hop++) {
    const trusted =
      'hops' in trust
        ? hop < trust.hops
        : isIP(client) !== 0 && trust.ranges.check(client, isIPv4(client) ? 'ipv4' : 'ipv6');
    if (!trusted) break;
    const next = chain[hop];
    // A hop the trusted proxy could not have written (not an address): the client is the proxy's peer.
    if (next === undefined) break;
    client = next;
  }
  return client;
}

/**
 * An IPv6 address's eight 16-bit groups (`::` filled with zeros, a dotted IPv4 tail as two groups,
 * a zone id dropped); undefined when it is not an IPv6 address. Parsed here because node:net only
 * says whether a string is an address (isIPv6) and matches ranges (BlockList): it has no function
 * that gives an address's bits, and no dependency of the project does either.
 */
function ipv6Groups(address: string): number[] | undefined {
  if (!isIPv6(address)) return undefined;
  let text = address.split('%', 1)[0] ?? '';
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const words = (part: string) => (part === '' ? [] : part.split(':').map((w) => Number.parseInt(w, 16)));
  const front = words(head);
  if (tail === undefined) return front;
  const back = words(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

/**
 * Whether a peer is a proxy the operator trusts (TRUST_PROXY): every peer with a hop count, the
 * listed ranges' own addresses with ranges. Its connections carry many clients.
 */
export function isTrustedProxy(peer: string | undefined, trust: TrustProxy): boolean {
  if (trust === undefined || peer === undefined) return false;
  if ('hops' in trust) return true;
  const address = plain(peer);
  const family = isIP(address);
  return family !== 0 && trust.ranges.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/**
 * The key a source address is limited under: an IPv4 address as it is, an IPv6 address by its /64
 * (`2001:db8:1:2::/64`). One IPv6 subscriber (a home line, a cloud machine) is handed a whole /64,
 * 2^64 addresses: limited one by one, each would come with a fresh limit. An IPv4 address written
 * as IPv6 (`::ffff:1.2.3.4`, or in hex `::ffff:102:304`) is the IPv4 address. Anything else (no
 * address known) as it is.
 */
export function limitedSource(address: string): string {
  const groups = ipv6Groups(address);
  if (!groups) return address;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [hi = 0, lo = 0] = groups.slice(6);
    return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join('.');
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/**
 * TRUST_PROXY's value: a hop count (1 to 10; 0 is off) or a comma-separated list of addresses and
 * ranges (`10.0.0.0/8, ::1`); a string saying what is wrong otherwise.
 */
export function parseTrustProxy(value: string): TrustProxy | string {
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > 10) return 'expected a hop count from 0 to 10, or addresses and ranges such as 10.0.0.0/8';
    return hops === 0 ? undefined : { hops };
  }
  const ranges = new BlockList();
  const parts = value
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  for (const part of parts) {
    const [address = '', prefix, more] = part.split('/');
    const family = isIP(address);
    const bits = family === 4 ? 32 : 128;
    if (family === 0 || more !== undefined)
      return `"${part}" is not an address or a range (10.0.0.0/8, fd00::/8)`;
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) ranges.addAddress(address, type);
    else if (/^\d+$/.test(prefix) && Number(prefix) <= bits) ranges.addSubnet(address, Number(prefix), type);
    else return `"${part}" has a prefix length that is not from 0 to ${bits}`;
  }
  if (parts.length === 0) return 'expected a hop count, or addresses and ranges such as 10.0.0.0/8';
  return { ranges, text: parts.join(', ') };
}
