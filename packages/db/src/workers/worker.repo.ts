import type { Kysely, Selectable } from 'kysely';
import type { Schema, WorkerTable } from '../schema.js';

export type WorkerRow = Selectable<WorkerTable>;

export function createWorkerRepo(db: Kysely<Schema>) {
  return {
    /** One row per worker name: a restarted worker takes its row over (new id, start time and heartbeat). */
    async upsert(row: WorkerRow): Promise<void> {
      const { name: _name, ...rest } = row;
      await db.insertInto('workers').values(row).onConflict((oc) => oc.column('name').doUpdateSet(rest)).execute();
    },
    async heartbeat(name: string, patch: Pick<WorkerRow, 'running' | 'heartbeat_at' | 'lease_expires_at'>): Promise<void> {
      await db.updateTable('workers').set(patch).where('name', '=', name).execute();
    },
    /** By name. */
    async list(): Promise<WorkerRow[]> {
      return db.selectFrom('workers').selectAll().orderBy('name', 'asc').execute();
    },
    async deleteStaleBefore(heartbeatBefore: string): Promise<void> {
      await db.deleteFrom('workers').where('heartbeat_at', '<', heartbeatBefore).execute();
    },
  };
}
export type WorkerRepo = ReturnType<typeof createWorkerRepo>;
