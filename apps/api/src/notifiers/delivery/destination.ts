// Where a notification may go: the host's addresses, resolved once and checked (link-local and metadata always
// refused; loopback and private ranges unless allowed), the connection then made to the checked address only.
import dns from 'node:dns/promises';
import net from 'node:net';
import { parseIpAddress, refusedAddressReason, refusedHostReason } from '@baton/contracts';

export type Address = { address: string; family: number };
export type Resolve = (hostname: string) => Promise<Address[]>;
export const systemResolve: Resolve = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

const PRIVATE_V4: Array<[number, number, number]> = [
  // [first octet, second octet low, second octet high] (second octet range; -1 = any)
  [10, -1, -1],
  [127, -1, -1],
  [0, -1, -1],
  [172, 16, 31],
  [192, 168, 168],
  [100, 64, 127],
];

/** Loopback, private and carrier-grade NAT addresses: refused unless BATON_NOTIFY_ALLOW_PRIVATE. */
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

/** The address to connect to, or why the destination is refused. Never throws. */
export async function checkedDestination(
  hostname: string,
  opts: { allowPrivate: boolean; resolve?: Resolve | undefined },
): Promise<{ ok: true; address: Address } | { ok: false; reason: string; retry: boolean }> {
  const bare = hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  const literal = refusedHostReason(bare);
  if (literal) return { ok: false, reason: `refused: ${literal}`, retry: false };
  let addresses: Address[];
  try {
    addresses = net.isIP(bare)
      ? [{ address: bare, family: net.isIP(bare) }]
      : await (opts.resolve ?? systemResolve)(bare);
  } catch (err) {
    return {
      ok: false,
      reason: `cannot resolve ${bare}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
      retry: true,
    };
  }
  for (const a of addresses) {
    const why = refusedAddressReason(a.address) ?? (opts.allowPrivate ? undefined : privateAddressReason(a.address));
    if (why)
      return {
        ok: false,
        reason: `refused: ${bare} resolves to ${why}${opts.allowPrivate ? '' : ' (BATON_NOTIFY_ALLOW_PRIVATE=true allows private ones)'}`,
        retry: false,
      };
  }
  if (!addresses[0]) return { ok: false, reason: `cannot resolve ${bare}: no address`, retry: true };
  return { ok: true, address: addresses[0] };
}
