// Keys a run's ssh recorded on first contact (its final status event's `host_keys`), kept for the run's inventory
// and project when their policy is still accept_new. Everything in the event is checked again: the executor's
// word is not trusted blindly (a worker is another machine), and a bad entry is dropped, never stored.
import { parseKnownHosts, type KnownHostEntry, type RunEvent } from '@baton/contracts';
import type { InventoryRepo, KnownHostRepo, KnownHostRow, KnownHostScope, ProjectRepo, RunRepo } from '@baton/db';

export type HostKeyTx = {
  knownHosts: Pick<KnownHostRepo, 'recordFirstSeen'>;
  inventories: Pick<InventoryRepo, 'findSummary'>;
  projects: Pick<ProjectRepo, 'findById'>;
  runs: Pick<RunRepo, 'findById'>;
};

/** At most this many keys a run may record per scope: a run against 10 000 hosts with 3 key types each. */
const MAX_RECORDED = 30_000;

/** The well-formed entries of an untrusted list, as known_hosts text would give them. */
function entriesOf(value: unknown): KnownHostEntry[] {
  if (!Array.isArray(value)) return [];
  const lines = value
    .slice(0, MAX_RECORDED)
    .filter((e): e is Record<string, unknown> => typeof e === 'object' && e !== null)
    .map((e) => [e.host, e.key_type, e.key])
    .filter((f): f is string[] => f.every((x) => typeof x === 'string' && !/\s/.test(x)))
    .map((f) => f.join(' '));
  return parseKnownHosts(lines.join('\n')).entries;
}

/** The rows of an owner's keys: recorded (by a run, or by git on first contact) or pinned (by a user). */
export function knownHostRows(
  entries: readonly KnownHostEntry[],
  scope: KnownHostScope,
  scopeId: string,
  origin: Pick<KnownHostRow, 'source' | 'run_id' | 'created_by' | 'created_at'>,
): KnownHostRow[] {
  return entries.map((k) => ({ scope, scope_id: scopeId, host: k.host, key_type: k.key_type, key: k.key, ...origin }));
}

const byRun = (e: RunEvent) => ({ source: 'recorded', run_id: e.run_id, created_by: null, created_at: e.ts });

/** Stores what the final status event `e` reports ssh recorded; nothing when the policy changed since. */
export async function recordLearnedHostKeys(r: HostKeyTx, e: RunEvent): Promise<void> {
  const reported = e.data.host_keys;
  if (typeof reported !== 'object' || reported === null) return;
  const { inventory, project } = reported as Record<string, unknown>;
  const run = await r.runs.findById(e.run_id);
  if (!run) return;
  const forInventory = entriesOf(inventory);
  if (forInventory.length > 0 && run.inventory_id) {
    const owner = await r.inventories.findSummary(run.inventory_id);
    if (owner?.host_key_checking === 'accept_new')
      await r.knownHosts.recordFirstSeen(
        'inventory',
        owner.id,
        knownHostRows(forInventory, 'inventory', owner.id, byRun(e)),
      );
  }
  const forProject = entriesOf(project);
  if (forProject.length > 0 && run.project_id) {
    const owner = await r.projects.findById(run.project_id);
    if (owner?.host_key_checking === 'accept_new')
      await r.knownHosts.recordFirstSeen('project', owner.id, knownHostRows(forProject, 'project', owner.id, byRun(e)));
  }
}
