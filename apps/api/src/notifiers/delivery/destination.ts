// Where a notification may go: the host's addresses, resolved once and checked (link-local and metadata always
// refused; loopback and private ranges unless allowed), the connection then made to the checked address only.
import dns from 'node:dns/promises';
import net from 'node:net';
import { privateAddressReason, refusedAddressReason, refusedHostReason } from '@baton/contracts';

export type Address = { address: string; family: number };
export type Resolve = (hostname: string) => Promise<Address[]>;
export const systemResolve: Resolve = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

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
