// Drift (issue 14): resources the latest dry run found out of their desired state, hosts it could not assess, and
// reconcile: a real run of what found the drift, limited to that host, always held for approval.
import type {
  DriftItem,
  DriftQuery,
  FixedDriftItem,
  ReconcileBody,
  ReconcileResult,
  Run,
  SubmitRunBody,
  UnassessedHost,
} from '@baton/contracts';
import type { DriftHostRow, DriftItemRow, ObservationRepo, RunRow } from '@baton/db';
import type { Authorizer, Principal } from '../authz/authorize.js';
import { ConflictError } from '../common/errors.js';
import { decodeCursor, decodeTextCursor, encodeCursor, notIssued, type Page } from '../common/paging.js';
import type { LaunchContext } from '../runs/run-launch.js';
import type { RunAccess } from '../runs/run-access.js';

function parseDiff(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

export function toDriftItem(d: DriftItemRow): DriftItem {
  return {
    id: d.id,
    host: d.host,
    playbook: d.playbook,
    project_id: d.project_id,
    commit: d.git_commit,
    inventory_id: d.inventory_id,
    task: d.task,
    task_path: d.task_path,
    ...(d.item === null ? {} : { item: d.item }),
    action: d.action,
    // A no_log task's diff is never kept; this is the second lock on that door.
    diff: d.no_log ? null : parseDiff(d.diff),
    no_log: d.no_log === 1,
    found_in_run_id: d.found_in_run_id,
    found_at: d.found_at,
    reconcile_run_id: d.reconcile_run_id,
  };
}

const toFixed = (d: DriftItemRow): FixedDriftItem => ({
  ...toDriftItem(d),
  resolved_by_run_id: d.resolved_by_run_id,
  resolved_at: d.resolved_at,
  fixed: d.fixed === null ? null : d.fixed === 1,
});

const toUnassessed = (h: DriftHostRow): UnassessedHost => ({
  host: h.host,
  playbook: h.playbook,
  project_id: h.project_id,
  inventory_id: h.inventory_id,
  commit: h.git_commit,
  reason: h.reason ?? '',
  run_id: h.run_id,
  at: h.at,
});

/** The reconcile run's spec: the dry run's playbook, commit, inventory, credentials and variables, on one host, for real. */
function reconcileSpec(dry: RunRow, host: string): SubmitRunBody {
  return {
    playbook: dry.playbook,
    ...(dry.project_id ? { project_id: dry.project_id } : {}),
    ...(dry.project_id && dry.git_commit ? { ref: dry.git_commit } : {}),
    ...(dry.inventory_id ? { inventory_id: dry.inventory_id } : { inventory: dry.inventory_content ?? '' }),
    limit: host,
    ...(dry.extra_vars ? { extra_vars: dry.extra_vars } : {}),
    credential_ids: dry.credential_ids,
    check: false,
    ...(dry.forks !== null ? { forks: dry.forks } : {}),
    ...(dry.verbosity !== null ? { verbosity: dry.verbosity } : {}),
    ...(dry.timeout_s !== null ? { timeout_s: dry.timeout_s } : {}),
    ...(dry.labels.length ? { labels: dry.labels } : {}),
  };
}

export function createDriftService(deps: {
  observation: Pick<ObservationRepo, 'list' | 'unassessed' | 'openOfHost' | 'markReconcile' | 'byReconcileRun'>;
  access: Pick<RunAccess, 'visibility' | 'visibleRun'>;
  authz: Pick<Authorizer, 'requireCreator'>;
  /** Opens a run's sealed survey password answers (runs.secret_vars_enc), so the reconcile run gets them too. */
  openSecrets: (sealed: string) => Record<string, string>;
  submit: (p: Principal, body: SubmitRunBody, ctx: LaunchContext) => Promise<Run>;
  transaction: <T>(fn: (r: { observation: Pick<ObservationRepo, 'markReconcile'> }) => Promise<T>) => Promise<T>;
}) {
  const filterOf = (q: {
    host?: string | undefined;
    inventory?: string | undefined;
    playbook?: string | undefined;
  }) => ({
    host: q.host,
    inventoryId: q.inventory,
    playbook: q.playbook,
  });

  return {
    /** Open drift the caller may see, newest finding first. */
    async drift(p: Principal, q: DriftQuery): Promise<Page<DriftItem>> {
      const rows = await deps.observation.list(
        filterOf(q),
        { limit: q.limit + 1, before: decodeCursor(q.cursor) },
        await deps.access.visibility(p),
      );
      const items = rows.slice(0, q.limit).map(toDriftItem);
      return rows.length > q.limit ? { items, next: encodeCursor(items[items.length - 1]!.id) } : { items };
    },

    /** Hosts the latest dry run of their inventory and playbook could not assess, by host. */
    async unassessed(p: Principal, q: DriftQuery): Promise<Page<UnassessedHost>> {
      const key = decodeTextCursor(q.cursor);
      let after: { host: string; scope: string } | undefined;
      if (key !== undefined) {
        const cut = key.indexOf('\n');
        if (cut < 0) throw notIssued();
        after = { host: key.slice(0, cut), scope: key.slice(cut + 1) };
      }
      const rows = await deps.observation.unassessed(
        filterOf(q),
        { limit: q.limit + 1, after },
        await deps.access.visibility(p),
      );
      const page = rows.slice(0, q.limit);
      const last = page[page.length - 1];
      return rows.length > q.limit && last
        ? { items: page.map(toUnassessed), next: encodeCursor(`${last.host}\n${last.scope}`) }
        : { items: page.map(toUnassessed) };
    },

    /**
     * A run of the playbook, commit and inventory of the dry run that found the host's drift, limited to that host, not
     * in check mode, origin reconcile (always held for approval), linked to the drift it should fix. 409 when the host
     * has no drift the caller may see, or drift from several playbooks or inventories and the body does not choose.
     */
    async reconcile(p: Principal, body: ReconcileBody): Promise<ReconcileResult> {
      deps.authz.requireCreator(p);
      const open = await deps.observation.openOfHost(
        body.host,
        { inventoryId: body.inventory_id, playbook: body.playbook },
        await deps.access.visibility(p),
      );
      if (open.length === 0) throw new ConflictError(`host ${body.host} has no drift to reconcile`);
      const scopes = [...new Set(open.map((d) => d.scope))];
      if (scopes.length > 1) {
        const which = [...new Set(open.map((d) => `${d.playbook} on ${d.inventory_id ?? 'an inline inventory'}`))];
        throw new ConflictError(
          `host ${body.host} drifts under several playbooks or inventories (${which.join('; ')}): give playbook and inventory_id`,
        );
      }
      // open is newest finding first: the latest dry run decides what runs.
      const dry = await deps.access.visibleRun(p, open[0]!.found_in_run_id);
      const secretVars = dry.secret_vars_enc === null ? undefined : deps.openSecrets(dry.secret_vars_enc);
      const run = await deps.submit(p, reconcileSpec(dry, body.host), { origin: 'reconcile', secretVars });
      await deps.transaction((r) =>
        r.observation.markReconcile(
          open.map((d) => d.id),
          run.id,
        ),
      );
      return { run, resources: open.map((d) => toDriftItem({ ...d, reconcile_run_id: run.id })) };
    },

    /** The drift a reconcile run was proposed to fix, with what became of each (the caller must see the run). */
    async ofRun(p: Principal, runId: string): Promise<FixedDriftItem[]> {
      await deps.access.visibleRun(p, runId);
      return (await deps.observation.byReconcileRun(runId)).map(toFixed);
    },
  };
}
export type DriftService = ReturnType<typeof createDriftService>;
