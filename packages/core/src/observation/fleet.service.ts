// Fleet health and host history (issue 14): hosts ranked by failures over their recent runs, flaky hosts, and one
// host's runs, all read from the rollups the ingester keeps (observation-rollup.ts).
import type { FleetHost, FleetQuery, HostRun, HostRunsQuery } from '@baton/contracts';
import type { HostRunRow, HostWindowSummary, ObservationRepo } from '@baton/db';
import type { Principal } from '../authz/authorize.js';
import { NotFoundError } from '../common/errors.js';
import type { Page } from '../common/paging.js';
import type { RunAccess } from '../runs/run-access.js';
import { flakyReason, isFailure } from './flaky.js';
import { decodeNumberCursor, offsetPage, seqPage } from './observation-paging.js';
import { seconds } from './stats.js';

type Outcome = FleetHost['last_outcome'];

function parseFailedTasks(text: string): HostRun['failed_tasks'] {
  try {
    const list: unknown = JSON.parse(text);
    return Array.isArray(list)
      ? list.map((t: { task?: unknown; message?: unknown }) => ({
          task: String(t?.task ?? ''),
          message: String(t?.message ?? ''),
        }))
      : [];
  } catch {
    return [];
  }
}

/** One host's runs in the window, newest first, as a fleet row. */
function toFleetHost(host: string, newestFirst: readonly HostRunRow[]): FleetHost {
  const count = (o: string) => newestFirst.filter((r) => r.outcome === o).length;
  const last = newestFirst[0]!;
  const failures = newestFirst.filter((r) => isFailure(r.outcome)).length;
  const reason = flakyReason([...newestFirst].reverse());
  return {
    host,
    runs: newestFirst.length,
    ok: count('ok'),
    changed: count('changed'),
    failed: count('failed'),
    unreachable: count('unreachable'),
    failure_rate: failureRate(failures, newestFirst.length),
    last_outcome: last.outcome as Outcome,
    last_run_id: last.run_id,
    last_seen_at: last.finished_at,
    flaky: reason !== null,
    flaky_reason: reason,
  };
}

export function toHostRun(r: HostRunRow): HostRun {
  return {
    run_id: r.run_id,
    outcome: r.outcome as Outcome,
    counts: {
      ok: r.ok,
      changed: r.changed,
      failed: r.failed,
      unreachable: r.unreachable,
      skipped: r.skipped,
      rescued: r.rescued,
      ignored: r.ignored,
    },
    failed_tasks: parseFailedTasks(r.failed_tasks),
    duration_s: r.duration_ms === null ? null : seconds(r.duration_ms),
    playbook: r.playbook,
    project_id: r.project_id,
    inventory_id: r.inventory_id,
    commit: r.git_commit,
    check: r.check_mode === 1,
    origin: r.origin as HostRun['origin'],
    finished_at: r.finished_at,
  };
}

/** What the fleet is ranked by. */
type Rank = Pick<FleetHost, 'host' | 'failed' | 'unreachable' | 'failure_rate' | 'last_seen_at'>;

const failureRate = (failures: number, runs: number) => Math.round((failures / runs) * 10_000) / 10_000;

const rankOf = (s: HostWindowSummary): Rank => ({
  host: s.host,
  failed: s.failed,
  unreachable: s.unreachable,
  failure_rate: failureRate(s.failed + s.unreachable, s.runs),
  last_seen_at: s.last_seen_at,
});

function groupByHost(rows: readonly HostRunRow[]): Map<string, HostRunRow[]> {
  const byHost = new Map<string, HostRunRow[]>();
  for (const r of rows) {
    const list = byHost.get(r.host);
    if (list) list.push(r);
    else byHost.set(r.host, [r]);
  }
  return byHost;
}

/** Most failures first, then the higher failure rate, the most recently seen, and the name. */
function byFailures(a: Rank, b: Rank): number {
  return (
    b.failed + b.unreachable - (a.failed + a.unreachable) ||
    b.failure_rate - a.failure_rate ||
    (a.last_seen_at < b.last_seen_at ? 1 : a.last_seen_at > b.last_seen_at ? -1 : 0) ||
    (a.host < b.host ? -1 : a.host > b.host ? 1 : 0)
  );
}

export function createFleetService(deps: {
  observation: Pick<ObservationRepo, 'recentSummary' | 'recentRuns' | 'hostRuns' | 'hostSeen'>;
  access: Pick<RunAccess, 'visibility'>;
}) {
  const filterOf = (q: {
    inventory?: string | undefined;
    project?: string | undefined;
    playbook?: string | undefined;
  }) => ({
    inventoryId: q.inventory,
    projectId: q.project,
    playbook: q.playbook,
  });

  return {
    /**
     * Hosts ranked by failures over their last `window` runs the caller may see (see FLAKY_RULE). The ranking comes
     * from per-host counts the database makes; only the page's hosts are read run by run (and, to filter on flaky,
     * the hosts that both failed and succeeded in the window: no other host can be flaky).
     */
    async fleet(p: Principal, q: FleetQuery): Promise<Page<FleetHost>> {
      const offset = decodeNumberCursor(q.cursor) ?? 0;
      const visible = await deps.access.visibility(p);
      const filter = filterOf(q);
      const runsOf = async (hosts: readonly string[]) =>
        groupByHost(hosts.length ? await deps.observation.recentRuns(filter, q.window, visible, hosts) : []);
      const summary = await deps.observation.recentSummary(
        filter,
        q.window,
        visible,
        q.host === undefined ? undefined : [q.host],
      );
      let ranked = summary.map(rankOf);
      if (q.flaky !== undefined) {
        const mixed = summary.filter((s) => s.failed + s.unreachable > 0 && s.failed + s.unreachable < s.runs);
        const flaky = new Set<string>();
        for (const [host, list] of await runsOf(mixed.map((s) => s.host)))
          if (flakyReason([...list].reverse()) !== null) flaky.add(host);
        ranked = ranked.filter((h) => flaky.has(h.host) === (q.flaky === 'true'));
      }
      const page = offsetPage(ranked.sort(byFailures), offset, q.limit);
      const runs = await runsOf(page.items.map((h) => h.host));
      // A host's figures come from its runs (the same window the counts were made over).
      const items = page.items.flatMap((h) => {
        const list = runs.get(h.host);
        return list ? [toFleetHost(h.host, list)] : [];
      });
      return { ...page, items };
    },

    /** One host's runs the caller may see, newest first; 404 when no run the caller may see reported on it. */
    async hostRuns(p: Principal, host: string, q: HostRunsQuery): Promise<Page<HostRun>> {
      const visible = await deps.access.visibility(p);
      const beforeSeq = decodeNumberCursor(q.cursor);
      const rows = await deps.observation.hostRuns(host, filterOf(q), { limit: q.limit + 1, beforeSeq }, visible);
      if (rows.length === 0 && beforeSeq === undefined && !(await deps.observation.hostSeen(host, visible)))
        throw new NotFoundError(`host ${host} not found`);
      return seqPage(rows, q.limit, (r) => r.host_seq, toHostRun);
    },
  };
}
export type FleetService = ReturnType<typeof createFleetService>;
