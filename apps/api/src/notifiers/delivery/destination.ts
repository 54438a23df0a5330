// Where a notification may go: the host's addresses, resolved once and checked (link-local and metadata always
// refused; loopback and private ranges unless allowed), the connection then made to the checked address only. The
// same check as git, inventory URLs and Galaxy servers (the executor's fetch destinations), with its own setting.
import { type Address, checkedFetchAddress, type Resolve } from '@baton/executor';

export type { Address, Resolve };

/** The address to connect to, or why the destination is refused (retry: a name that did not resolve). Never throws. */
export async function checkedDestination(
  hostname: string,
  opts: { allowPrivate: boolean; resolve?: Resolve | undefined },
): Promise<{ ok: true; address: Address } | { ok: false; reason: string; retry: boolean }> {
  const checked = await checkedFetchAddress(hostname, {
    denyPrivate: !opts.allowPrivate,
    resolve: opts.resolve,
    privateHint: ' (BATON_NOTIFY_ALLOW_PRIVATE=true allows private ones)',
  });
  return checked.ok ? checked : { ok: false, reason: checked.reason, retry: checked.unresolved === true };
}
