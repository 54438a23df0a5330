// The registry of executors (embedded ones now, `baton worker` daemons with queue mode): who runs what, and
// whether each is still alive, judged by how long ago it last heartbeated.
import type { Worker } from '@baton/contracts';
import type { WorkerRepo, WorkerRow } from '@baton/db';
import type { Principal } from '../authz/authorize.js';
import { type Clock, iso } from '../common/clock.js';
import { newId } from '../common/ids.js';

export const HEARTBEAT_INTERVAL_MS = 5_000;
/** Up to three missed heartbeats is still fresh; up to six (a default lease) is stale; later the worker is dead. */
export const FRESH_WITHIN_MS = 15_000;
export const STALE_WITHIN_MS = 30_000;

export function freshnessOf(heartbeatAt: Date, now: Date): Worker['freshness'] {
  const age = now.getTime() - heartbeatAt.getTime();
  if (age <= FRESH_WITHIN_MS) return 'fresh';
  if (age <= STALE_WITHIN_MS) return 'stale';
  return 'dead';
}

export function toWorkerView(row: WorkerRow, now: Date): Worker {
  return {
    id: row.id, name: row.name, host: row.host, mode: row.mode as Worker['mode'], labels: JSON.parse(row.labels) as string[], capacity: row.capacity,
    running: JSON.parse(row.running) as string[], started_at: row.started_at, last_heartbeat: row.heartbeat_at, lease_expires_at: row.lease_expires_at,
    freshness: freshnessOf(new Date(row.heartbeat_at), now),
  };
}

export function createWorkerService(deps: { workers: Pick<WorkerRepo, 'upsert' | 'heartbeat' | 'list'>; clock: Clock }) {
  return {
    /** A worker (re)starting takes over its name's row: new id, start time, nothing running. */
    async register(w: { name: string; host: string; mode: 'embedded' | 'daemon'; labels: string[]; capacity: number }): Promise<void> {
      const now = deps.clock();
      await deps.workers.upsert({
        id: newId('wrk', now.getTime()), name: w.name, host: w.host, mode: w.mode, labels: JSON.stringify(w.labels), capacity: w.capacity,
        running: '[]', started_at: iso(now), heartbeat_at: iso(now),
        // Nothing is leased yet; until its first heartbeat the worker counts as alive for one default lease.
        lease_expires_at: iso(new Date(now.getTime() + STALE_WITHIN_MS)),
      });
    },

    async heartbeat(name: string, running: string[], leaseExpiresAt: Date): Promise<void> {
      await deps.workers.heartbeat(name, { running: JSON.stringify(running), heartbeat_at: iso(deps.clock()), lease_expires_at: iso(leaseExpiresAt) });
    },

    /** Any signed-in user may see the fleet; by name. */
    async list(_p: Principal): Promise<Worker[]> {
      const now = deps.clock();
      return (await deps.workers.list()).map((row) => toWorkerView(row, now));
    },
  };
}
export type WorkerService = ReturnType<typeof createWorkerService>;
