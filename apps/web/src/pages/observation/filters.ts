// The observation pages keep their filters in the address's query string: a filtered view is a link to share.
import { useSearchParams } from 'wouter';

export type FilterValues<K extends string> = Partial<Record<K, string>>;

/** The given filters from the query string (empty values left out), and a setter that rewrites one of them. */
export function useUrlFilters<K extends string>(keys: readonly K[]) {
  const [params, setParams] = useSearchParams();
  const values: FilterValues<K> = {};
  for (const k of keys) {
    const v = params.get(k);
    if (v) values[k] = v;
  }
  return {
    values,
    any: keys.some((k) => values[k]),
    set(key: K, value: string) {
      setParams((prev) => {
        const next = new URLSearchParams(prev);
        if (value) next.set(key, value);
        else next.delete(key);
        return next;
      });
    },
    clear() {
      setParams((prev) => {
        const next = new URLSearchParams(prev);
        for (const k of keys) next.delete(k);
        return next;
      });
    },
  };
}

/** The path to a host's page (host names may hold colons, slashes of a kind, unicode: always encoded). */
export const hostPath = (host: string) => `/hosts/${encodeURIComponent(host)}`;

/**
 * The host named by the address /ui/hosts/<encoded>. Read from the raw address, not the router's params: the
 * router half-decodes paths (decodeURI leaves %3A as it is but turns %25 into %), which would change names holding
 * a percent sign (an IPv6 zone, `fe80::1%eth0`).
 */
export function hostFromAddress(pathname: string): string | null {
  const m = /\/hosts\/([^/]+)\/?$/.exec(pathname);
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]!);
  } catch {
    return m[1]!;
  }
}
