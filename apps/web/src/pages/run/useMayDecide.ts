// Whether the caller may approve or reject a held run. The Run view does not name its approvers, so the answer comes
// from the API's own list of held runs awaiting the caller (awaiting=me); admins may always decide.
import type { Run } from '@baton/contracts';
import { useQuery } from '@tanstack/react-query';
import { qs, request } from '../../api/client';
import { useMe } from '../../auth/auth';

/** Pages looked through for the run (held runs are few: they wait for people). */
const MAX_PAGES = 10;

async function isAwaitingMe(path: string, runId: string, signal: AbortSignal): Promise<boolean> {
  let next: string | undefined = path;
  for (let page = 0; next && page < MAX_PAGES; page++) {
    const r: Awaited<ReturnType<typeof request<Run[]>>> = await request<Run[]>('GET', next, { signal });
    if (r.body.some((x) => x.id === runId)) return true;
    next = r.next;
  }
  return false;
}

export function useMayDecide(run: Run): { mayApprove: boolean; mayReject: boolean } {
  const me = useMe();
  const decidable = run.status === 'held' && run.kind !== 'shard' && run.kind !== 'step';
  const decided = run.approvals.some((a) => a.user_id === me.user.id);
  const isAdmin = me.role === 'admin';
  // The path is the cache key, so invalidating '/v1/runs' after a decision refreshes it.
  const path = `/v1/runs${qs({ awaiting: 'me', since: run.created_at, limit: 200 })}`;
  const awaiting = useQuery({
    queryKey: [path, 'awaiting', run.id],
    queryFn: ({ signal }) => isAwaitingMe(path, run.id, signal),
    enabled: decidable && !decided && !isAdmin,
    staleTime: 10_000,
  });
  if (!decidable || decided) return { mayApprove: false, mayReject: false };
  if (isAdmin) return { mayApprove: run.submitted_by !== me.user.id, mayReject: true };
  const may = awaiting.data === true;
  return { mayApprove: may, mayReject: may };
}
