// Names for the objects a launch form picks from (projects, inventories, credentials, templates): one page of each
// list the caller may read is enough for a select; an id not in it is shown as the id.
import { useMemo } from 'react';
import { useApi } from '../../../api/hooks';

/** The most a list answers in one page (the API's page limit). */
const ONE_PAGE = 500;
const NAMES_STALE_MS = 60_000;

interface Listed {
  id: string;
  name: string;
}
interface ListedCredential extends Listed {
  type: string;
}

export interface Named {
  id: string;
  name: string;
}

function useNamed<T extends { id: string }>(collection: string, nameOf: (item: T) => string, enabled: boolean) {
  const q = useApi<T[]>(enabled ? `/v1/${collection}?limit=${ONE_PAGE}` : null, { staleTime: NAMES_STALE_MS });
  return useMemo(() => {
    const items: Named[] = (q.data ?? []).map((i) => ({ id: i.id, name: nameOf(i) }));
    const byId = new Map(items.map((i) => [i.id, i.name]));
    return { items, full: q.data ?? [], nameOf: (id: string) => byId.get(id) ?? id, isLoading: q.isLoading };
    // nameOf is fixed per hook below.
  }, [q.data, q.isLoading]);
}

export const useProjectNames = (enabled = true) => useNamed<Listed>('projects', (p) => p.name, enabled);
export const useInventoryNames = (enabled = true) => useNamed<Listed>('inventories', (i) => i.name, enabled);
export const useCredentialNames = (enabled = true) =>
  useNamed<ListedCredential>('credentials', (c) => `${c.name} (${c.type.replaceAll('_', ' ')})`, enabled);
export const useTemplateList = (enabled = true) => useNamed<Listed>('templates', (t) => t.name, enabled);
