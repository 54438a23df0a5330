// Names for the ids a run carries (project, template, inventory, credential, user), from the lists the caller may
// read. One page of each list is enough to label a filter select; an id not in it is shown as the id.
import type { Credential, Policy, Template, User } from '@baton/contracts';
import { useMemo } from 'react';
import { useApi } from '../../api/hooks';

/** The most a list answers in one page (PageLimit). */
const ONE_PAGE = 500;
/** Names change rarely; a run list refetching every few seconds should not refetch them. */
const NAMES_STALE_MS = 5 * 60_000;

/** The fields of a project this UI reads (contracts exports its schema, not a type). */
export interface ProjectItem {
  id: string;
  name: string;
  branch: string;
  last_commit: string | null;
}

export interface Named {
  id: string;
  name: string;
}

function useNamedList<T extends { id: string }>(collection: string, nameOf: (item: T) => string, enabled = true) {
  const q = useApi<T[]>(enabled ? `/v1/${collection}?limit=${ONE_PAGE}` : null, { staleTime: NAMES_STALE_MS });
  return useMemo(() => {
    const items: Named[] = (q.data ?? []).map((i) => ({ id: i.id, name: nameOf(i) }));
    const byId = new Map(items.map((i) => [i.id, i.name]));
    return { items, full: q.data ?? [], nameOf: (id: string) => byId.get(id), isLoading: q.isLoading, error: q.error };
    // nameOf is a constant per call site.
  }, [q.data, q.isLoading, q.error]);
}

export const useProjects = (enabled = true) => useNamedList<ProjectItem>('projects', (p) => p.name, enabled);
export const useTemplates = (enabled = true) => useNamedList<Template>('templates', (t) => t.name, enabled);
export const useInventories = (enabled = true) => useNamedList<Named>('inventories', (i) => i.name, enabled);
export const useCredentials = (enabled = true) =>
  useNamedList<Credential>('credentials', (c) => `${c.name} (${c.type.replaceAll('_', ' ')})`, enabled);
/** Operators and admins may read policies; a viewer gets 403 and sees ids. */
export const usePolicies = (enabled = true) => useNamedList<Policy>('policies', (p) => p.name, enabled);

/** A user's name by id (one cached request per user seen). */
export function useUsername(id: string | null | undefined): string | undefined {
  const q = useApi<User>(id ? `/v1/users/${id}` : null, { staleTime: NAMES_STALE_MS, retry: false });
  return q.data?.username;
}
