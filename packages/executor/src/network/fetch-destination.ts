// Where git, inventory URL sources and ansible-galaxy may fetch from. Link-local and cloud metadata addresses are
// always refused (refused-address.ts); with BATON_FETCH_DENY_PRIVATE, loopback and private ranges too, checked on
// the addresses the name resolves to (every one of them), so a public name pointing inside is refused as well.
import dns from 'node:dns/promises';
import net from 'node:net';
import { privateAddressReason, refusedAddressReason, refusedHostReason, tryParseUrl } from '@baton/contracts';

export type Address = { address: string; family: number };
export type Resolve = (hostname: string) => Promise<Address[]>;
const systemResolve: Resolve = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

export interface FetchPolicy {
  /** BATON_FETCH_DENY_PRIVATE: refuse loopback and private addresses (and local file:// repositories) */
  denyPrivate: boolean;
  /** tests answer names themselves */
  resolve?: Resolve | undefined;
  /** what a refusal says about the setting that allows private addresses (default: BATON_FETCH_DENY_PRIVATE's) */
  privateHint?: string | undefined;
}

/** The address to connect to, or why not. Never throws. */
export async function checkedFetchAddress(
  hostname: string,
  policy: FetchPolicy,
): Promise<{ ok: true; address: Address } | { ok: false; reason: string; unresolved?: true }> {
  const bare = hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  const literal = refusedHostReason(bare);
  if (literal) return { ok: false, reason: `refused: ${literal}` };
  let addresses: Address[];
  try {
    addresses = net.isIP(bare)
      ? [{ address: bare, family: net.isIP(bare) }]
      : await (policy.resolve ?? systemResolve)(bare);
  } catch (err) {
    return {
      ok: false,
      reason: `cannot resolve ${bare}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
      unresolved: true,
    };
  }
  for (const a of addresses) {
    const why = refusedAddressReason(a.address) ?? (policy.denyPrivate ? privateAddressReason(a.address) : undefined);
    if (why)
      return {
        ok: false,
        reason: `refused: ${bare} resolves to a refused address: ${why}${policy.denyPrivate ? (policy.privateHint ?? ' (BATON_FETCH_DENY_PRIVATE=true)') : ''}`,
      };
  }
  if (!addresses[0]) return { ok: false, reason: `cannot resolve ${bare}: no address`, unresolved: true };
  return { ok: true, address: addresses[0] };
}

/** A git remote's transport, host and port: `https://h/…`, `ssh://u@h:p/…`, `git://h/…`, scp-like `u@h:path`, `file:///…`. */
export function gitRemoteOf(
  url: string,
): { kind: 'file' } | { kind: 'network'; scheme: string; host: string; port: number } | undefined {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url)?.[1]?.toLowerCase();
  if (scheme === 'file') return { kind: 'file' };
  if (scheme === undefined) {
    const scp = /^(?:[A-Za-z0-9._~-]+@)?([A-Za-z0-9][A-Za-z0-9.-]*|\[[0-9A-Fa-f:.]+\]):/.exec(url);
    return scp ? { kind: 'network', scheme: 'ssh', host: scp[1]!, port: 22 } : undefined;
  }
  const parsed = tryParseUrl(url);
  if (!parsed || parsed.hostname === '') return undefined;
  const defaults: Record<string, number> = { https: 443, http: 80, ssh: 22, git: 9418 };
  return {
    kind: 'network',
    scheme,
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : (defaults[scheme] ?? 0),
  };
}
