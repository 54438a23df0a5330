// The registry of executors (embedded ones now, `baton worker` daemons with queue mode): who runs what, and
// whether each is still alive, judged by how long ago it last heartbeated.
import type { Worker } from '@baton/contracts';
import type { RunRepo, WorkerRepo, WorkerRow } from '@baton/db';
import type { Principal } from '../authz/authorize.js';
import { type Clock, iso } from '../common/clock.js';
import { newId } from '../common/ids.js';
import type { RunAccess } from '../runs/run-access.js';

export const HEARTBEAT_INTERVAL_MS = 5_000;
/** Up to three missed heartbeats is still fresh; up to six (a default lease) is stale; later the worker is dead. */
export const FRESH_WITHIN_MS = 15_000;
export const STALE_WITHIN_MS = 30_000;
/** A worker silent this long is forgotten (its row deleted): every name a restarted `baton serve` used stays listed as dead for a day. */
export const FORGET_WORKERS_AFTER_MS = 24 * 3600_000;

/**
 * The name of `baton serve`'s embedded executor: one per process, so a second process on the same database
 * never takes over (or judges) the first one's row and runs.
 */
export function embeddedWorkerName(hostname: string, pid: number): string {
  return `${hostname}/embedded/${pid}`;
}

/** The host and pid in an embedded executor's name; undefined for any other name. */
export function parseEmbeddedWorkerName(name: string): { hostname: string; pid: number } | undefined {
  const m = /^(.+)\/embedded\/([1-9][0-9]{0,9})$/.exec(name);
  return m ? { hostname: m[1]!, pid: Number(m[2]) } : undefined;
}

export function freshnessOf(heartbeatAt: Date, now: Date): Worker['freshness'] {
  const age = now.getTime() - heartbeatAt.getTime();
  if (age <= FRESH_WITHIN_MS) return 'fresh';
  if (age <= STALE_WITHIN_MS) return 'stale';
  return 'dead';
}

/** `running` lists only the runs `canSeeRun` accepts; `running_count` counts them all. */
export function toWorkerView(row: WorkerRow, now: Date, canSeeRun: (runId: string) => boolean = () => true): Worker {
  return {
    id: row.id,
    name: row.name,
    host: row.host,
    mode: row.mode as Worker['mode'],
    labels: row.labels,
    capacity: row.capacity,
    running: row.running.filter(canSeeRun),
    running_count: row.running.length,
    started_at: row.started_at,
    last_heartbeat: row.heartbeat_at,
    lease_expires_at: row.lease_expires_at,
    freshness: freshnessOf(new Date(row.heartbeat_at), now),
    paused: row.paused === 'event_buffer_full' ? 'event_buffer_full' : null,
  };
}

/** A worker daemon's heartbeat as it publishes it (the queue package's WorkerHeartbeat, structurally). */
export interface DaemonBeat {
  name: string;
  host: string;
  labels: string[];
  capacity: number;
  running: string[];
  started_at: string;
  last_heartbeat: string;
  lease_expires_at: string | null;
  /** set while the daemon leases no new run: its unsent-event buffer is full */
  paused?: 'event_buffer_full' | undefined;
}

export function createWorkerService(deps: {
  workers: Pick<WorkerRepo, 'upsert' | 'heartbeat' | 'list'>;
  runs: Pick<RunRepo, 'findMany'>;
  access: Pick<RunAccess, 'canSee'>;
  clock: Clock;
}) {
  /** The ids among `runIds` that `p` may see (the runs' own visibility rule); a run gone meanwhile is not shown. */
  async function visibleRunIds(p: Principal, runIds: string[]): Promise<Set<string>> {
    const visible = new Set<string>();
    for (const run of await deps.runs.findMany(runIds)) if (await deps.access.canSee(p, run)) visible.add(run.id);
    return visible;
  }

  return {
    /** A worker (re)starting takes over its name's row: new id, start time, nothing running. */
    async register(w: {
      name: string;
      host: string;
      mode: 'embedded' | 'daemon';
      labels: string[];
      capacity: number;
    }): Promise<void> {
      const now = deps.clock();
      await deps.workers.upsert({
        id: newId('wrk', now.getTime()),
        name: w.name,
        host: w.host,
        mode: w.mode,
        labels: w.labels,
        capacity: w.capacity,
        running: [],
        started_at: iso(now),
        heartbeat_at: iso(now),
        // Nothing is leased yet; until its first heartbeat the worker counts as alive for one default lease.
        lease_expires_at: iso(new Date(now.getTime() + STALE_WITHIN_MS)),
        paused: null,
      });
    },

    /**
     * Queue mode: the daemons' heartbeats, read from Redis, become their rows (every replica may mirror them;
     * an older beat never overwrites a newer one). A daemon restarted under its name gets a new id.
     */
    async mirror(daemons: readonly DaemonBeat[]): Promise<void> {
      const rows = new Map((await deps.workers.list()).map((row) => [row.name, row]));
      const forgetBefore = deps.clock().getTime() - FORGET_WORKERS_AFTER_MS;
      for (const d of daemons) {
        // A daemon silent for a day stays forgotten, as the recovery sweep forgets its row.
        if (Date.parse(d.last_heartbeat) < forgetBefore) continue;
        const row = rows.get(d.name);
        if (row && Date.parse(row.heartbeat_at) >= Date.parse(d.last_heartbeat)) continue;
        const id =
          row && row.started_at === d.started_at
            ? row.id
            : newId('wrk', Date.parse(d.started_at) || deps.clock().getTime());
        await deps.workers.upsert({
          id,
          name: d.name,
          host: d.host,
          mode: 'daemon',
          labels: d.labels,
          capacity: d.capacity,
          running: d.running,
          started_at: d.started_at,
          heartbeat_at: d.last_heartbeat,
          lease_expires_at: d.lease_expires_at ?? d.last_heartbeat,
          paused: d.paused ?? null,
        });
      }
    },

    async heartbeat(name: string, running: string[], leaseExpiresAt: Date): Promise<void> {
      await deps.workers.heartbeat(name, {
        running,
        heartbeat_at: iso(deps.clock()),
        lease_expires_at: iso(leaseExpiresAt),
      });
    },

    /**
     * Any signed-in user may see the fleet, by name; the ids of running runs only as far as the caller may see
     * those runs (admins see all), their number always.
     */
    async list(p: Principal): Promise<Worker[]> {
      const now = deps.clock();
      const rows = await deps.workers.list();
      if (p.role === 'admin') return rows.map((row) => toWorkerView(row, now));
      const visible = await visibleRunIds(p, [...new Set(rows.flatMap((row) => row.running))]);
      return rows.map((row) => toWorkerView(row, now, (id) => visible.has(id)));
    },
  };
}
export type WorkerService = ReturnType<typeof createWorkerService>;
