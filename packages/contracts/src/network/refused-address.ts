// Which network addresses the server refuses to connect to on a user's behalf (inventory URLs). One classifier
// for both checks: when a URL is saved (its host as written) and when it is fetched (every address DNS gives),
// so the two can never disagree. Loopback and private ranges stay allowed on purpose: a self-hosted Baton
// commonly reads inventory from a CMDB on the same host or LAN, and only admins and operators create sources.

type Bytes = readonly number[];

/** Host names of cloud metadata services, refused before any DNS lookup. */
export const METADATA_HOSTNAMES: ReadonlySet<string> = new Set([
  'metadata.google.internal',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
]);

/** Canonical dotted decimal only (what URL host parsing and getaddrinfo produce); anything else is no IPv4 address. */
function parseIpv4(text: string): Bytes | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const bytes: number[] = [];
  for (const part of parts) {
    if (!/^(?:0|[1-9][0-9]{0,2})$/.test(part)) return undefined;
    const n = Number(part);
    if (n > 255) return undefined;
    bytes.push(n);
  }
  return bytes;
}

/** RFC 4291 text (with `::`, and a trailing dotted IPv4 part) to 16 bytes. */
function parseIpv6(text: string): Bytes | undefined {
  let s = text;
  if (s.includes('.')) {
    // The last 32 bits written as dotted decimal (::ffff:169.254.169.254): rewrite them as two hex groups.
    const cut = s.lastIndexOf(':');
    const v4 = parseIpv4(s.slice(cut + 1));
    if (cut < 0 || !v4) return undefined;
    s = `${s.slice(0, cut + 1)}${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const groups = (half: string): number[] | undefined => {
    if (half === '') return [];
    const out: number[] = [];
    for (const g of half.split(':')) {
      if (!/^[0-9a-f]{1,4}$/i.test(g)) return undefined;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return undefined;
  let all: number[];
  if (halves.length === 1) {
    if (head.length !== 8) return undefined;
    all = head;
  } else {
    if (head.length + tail.length > 7) return undefined;
    all = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  }
  return all.flatMap((g) => [g >> 8, g & 0xff]);
}

export interface IpAddress {
  family: 4 | 6;
  bytes: Bytes;
}

/** An IP address from text: IPv4, or IPv6 with or without URL brackets and zone id. Never throws; undefined for anything else. */
export function parseIpAddress(text: string): IpAddress | undefined {
  if (text.length > 100) return undefined;
  const v4 = parseIpv4(text);
  if (v4) return { family: 4, bytes: v4 };
  const bare = text.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  const v6 = parseIpv6(bare);
  return v6 ? { family: 6, bytes: v6 } : undefined;
}

interface Range {
  net: Bytes;
  prefix: number;
  why: string;
}
const range = (text: string, prefix: number, why: string): Range => ({ net: parseIpAddress(text)!.bytes, prefix, why });

const REFUSED_IPV4: readonly Range[] = [
  range('169.254.0.0', 16, 'link-local (cloud metadata services answer at 169.254.169.254)'),
  range('0.0.0.0', 8, 'unspecified ("this network": 0.0.0.0 reaches the local host on Linux)'),
  range('100.100.100.200', 32, 'a cloud metadata address (Alibaba Cloud)'),
];
/**
 * 0.0.0.0/8 means the local host only to this host's kernel (no translator forwards to it), and an ambiguous
 * reading of zero padding would find it in every local-use NAT64 address: such readings skip it.
 */
const THIS_NETWORK = REFUSED_IPV4[1]!;
const REFUSED_IPV6: readonly Range[] = [
  range('fe80::', 10, 'link-local'),
  range('fd00:ec2::254', 128, 'a cloud metadata address (AWS)'),
  range('::', 128, 'the unspecified address'),
];

function inRange(bytes: Bytes, r: Range): boolean {
  for (let bit = 0; bit < r.prefix; bit += 8) {
    const mask = r.prefix - bit >= 8 ? 0xff : (0xff << (8 - (r.prefix - bit))) & 0xff;
    if ((bytes[bit / 8]! & mask) !== (r.net[bit / 8]! & mask)) return false;
  }
  return true;
}

const zeros = (b: Bytes, from: number, to: number) => b.slice(from, to).every((x) => x === 0);
const pick = (b: Bytes, ...at: number[]): Bytes => at.map((i) => b[i]!);

/**
 * The IPv4 addresses an IPv6 address stands for: the kernel (mapped, compatible), a translator (NAT64, SIIT)
 * or a relay (6to4) turns a connection to it into one to that IPv4 address, so that address is what is checked.
 */
function embeddedIpv4(b: Bytes): Array<{ how: string; v4: Bytes; ambiguous?: boolean }> {
  if (zeros(b, 0, 10) && b[10] === 0xff && b[11] === 0xff) return [{ how: 'an IPv4-mapped address', v4: b.slice(12) }];
  if (zeros(b, 0, 8) && b[8] === 0xff && b[9] === 0xff && zeros(b, 10, 12))
    return [{ how: 'an IPv4-translated address', v4: b.slice(12) }];
  // :: and ::1 are the IPv6 unspecified and loopback addresses, not IPv4-compatible ones.
  if (zeros(b, 0, 12) && !(zeros(b, 12, 15) && b[15]! <= 1))
    return [{ how: 'an IPv4-compatible address', v4: b.slice(12) }];
  const nat64 = b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b;
  if (nat64 && zeros(b, 4, 12)) return [{ how: 'a NAT64 address', v4: b.slice(12) }];
  if (nat64 && b[4] === 0 && b[5] === 1) return localUseNat64(b);
  if (b[0] === 0x20 && b[1] === 0x02) return [{ how: 'a 6to4 address', v4: b.slice(2, 6) }];
  return [];
}

/**
 * A local-use NAT64 prefix (64:ff9b:1::/48, RFC 8215) is any length from /48 to /96, and each length puts the
 * IPv4 address elsewhere (RFC 6052 §2.2: bit 64-71 zero, zeros after the address). The length is the
 * operator's, so every layout the address fits is read; these readings are `ambiguous`.
 */
function localUseNat64(b: Bytes): Array<{ how: string; v4: Bytes; ambiguous: boolean }> {
  const layouts: Array<{ at: number[]; suffixFrom: number }> = [
    { at: [6, 7, 9, 10], suffixFrom: 11 }, // /48
    { at: [7, 9, 10, 11], suffixFrom: 12 }, // /56
    { at: [9, 10, 11, 12], suffixFrom: 13 }, // /64
  ];
  const shorter = b[8] === 0 ? layouts.filter((l) => zeros(b, l.suffixFrom, 16)) : [];
  return [...shorter.map((l) => pick(b, ...l.at)), b.slice(12)].map((v4) => ({
    how: 'a local-use NAT64 address',
    v4,
    ambiguous: true,
  }));
}

const refusedIpv4 = (v4: Bytes, ambiguous = false): string | undefined =>
  REFUSED_IPV4.find((r) => inRange(v4, r) && !(ambiguous && r === THIS_NETWORK))?.why;

/**
 * Why the server must not connect to this IP address, or undefined when it may. Text that is no IP address is
 * refused too: it is called with what DNS answered, which must be an address.
 */
export function refusedAddressReason(address: string): string | undefined {
  const ip = parseIpAddress(address);
  if (!ip) return `${address.slice(0, 100)} is not an IP address`;
  if (ip.family === 4) {
    const why = refusedIpv4(ip.bytes);
    return why && `${address} is ${why}`;
  }
  const why = REFUSED_IPV6.find((r) => inRange(ip.bytes, r))?.why;
  if (why) return `${address} is ${why}`;
  for (const { how, v4, ambiguous } of embeddedIpv4(ip.bytes)) {
    const inner = refusedIpv4(v4, ambiguous);
    if (inner) return `${address} is ${how} for ${v4.join('.')}, which is ${inner}`;
  }
  return undefined;
}

/**
 * Why a URL's host is refused before any DNS lookup: a cloud metadata host name, or an IP literal that
 * refusedAddressReason refuses. Other names are undefined here; their addresses are checked after DNS.
 */
export function refusedHostReason(hostname: string): string | undefined {
  const bare = hostname
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase();
  if (METADATA_HOSTNAMES.has(bare)) return `${bare} is a cloud metadata service`;
  return parseIpAddress(bare) ? refusedAddressReason(bare) : undefined;
}

const PRIVATE_V4: Array<[number, number, number]> = [
  // [first octet, second octet low, second octet high] (second octet range; -1 = any)
  [10, -1, -1],
  [127, -1, -1],
  [0, -1, -1],
  [172, 16, 31],
  [192, 168, 168],
  [100, 64, 127],
];

/**
 * Loopback, private and carrier-grade NAT addresses: refused for notifications unless BATON_NOTIFY_ALLOW_PRIVATE, and for
 * git, inventory URLs and Galaxy servers when BATON_FETCH_DENY_PRIVATE.
 */
export function privateAddressReason(address: string): string | undefined {
  const ip = parseIpAddress(address);
  if (!ip) return undefined;
  if (ip.family === 4) {
    const [a, b] = ip.bytes as unknown as number[];
    const hit = PRIVATE_V4.some(([first, lo, hi]) => a === first && (lo === -1 || (b! >= lo && b! <= hi)));
    return hit ? `${address} is a loopback or private address` : undefined;
  }
  const bytes = ip.bytes as unknown as number[];
  const loopback = bytes.slice(0, 15).every((x) => x === 0) && bytes[15] === 1;
  const uniqueLocal = (bytes[0]! & 0xfe) === 0xfc;
  const mapped = bytes.slice(0, 10).every((x) => x === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  if (mapped) return privateAddressReason(bytes.slice(12).join('.'));
  return loopback || uniqueLocal ? `${address} is a loopback or private address` : undefined;
}
