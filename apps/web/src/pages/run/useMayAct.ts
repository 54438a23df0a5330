// Whether the caller may cancel or retry a run: the API asks for a creator role and `use` on every object the run
// references (admins: always). A non-admin sees only grants they (or their teams) hold and grants on objects they
// manage, so any grant they can see on an object means they may use it. Only for showing buttons: the API judges.
import type { Run } from '@baton/contracts';
import { useQueries } from '@tanstack/react-query';
import { api, qs } from '../../api/client';
import { useMe } from '../../auth/auth';

export function referencedObjects(run: Run): string[] {
  return [run.project_id, run.template_id, run.inventory_id, ...run.credential_ids].filter((x): x is string =>
    Boolean(x),
  );
}

/** `applies`: whether an action is possible in the run's state at all (no lookups otherwise). */
export function useMayAct(run: Run, applies: boolean): boolean {
  const me = useMe();
  const lookup = applies && me.role === 'operator';
  const objects = lookup ? referencedObjects(run) : [];
  const grants = useQueries({
    queries: objects.map((object) => {
      const path = `/v1/grants${qs({ object, limit: 1 })}`;
      return {
        queryKey: [path],
        queryFn: ({ signal }: { signal: AbortSignal }) => api.get<unknown[]>(path, signal),
        staleTime: 60_000,
      };
    }),
  });
  if (!applies || me.role === 'viewer') return false;
  if (me.role === 'admin') return true;
  return grants.every((g) => Array.isArray(g.data) && g.data.length > 0);
}
