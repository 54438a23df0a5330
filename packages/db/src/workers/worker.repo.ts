import type { Kysely, Selectable } from 'kysely';
import { type Decoded, jsonColumns } from '../json-columns.js';
import type { Schema, WorkerTable } from '../schema.js';

/** A worker's JSON columns, parsed. */
export interface WorkerJson {
  labels: string[];
  /** ids of the runs it holds */
  running: string[];
}
const json = jsonColumns<WorkerJson>({ labels: true, running: true });

export type WorkerRow = Decoded<Selectable<WorkerTable>, WorkerJson>;

export function createWorkerRepo(db: Kysely<Schema>) {
  return {
    /** One row per worker name: a restarted worker takes its row over (new id, start time and heartbeat). */
    async upsert(row: WorkerRow): Promise<void> {
      const stored = json.encode(row);
      const { name: _name, ...rest } = stored;
      await db
        .insertInto('workers')
        .values(stored)
        .onConflict((oc) => oc.column('name').doUpdateSet(rest))
        .execute();
    },
    async heartbeat(
      name: string,
      patch: Pick<WorkerRow, 'running' | 'heartbeat_at' | 'lease_expires_at'>,
    ): Promise<void> {
      await db.updateTable('workers').set(json.encode(patch)).where('name', '=', name).execute();
    },
    /** By name. */
    async list(): Promise<WorkerRow[]> {
      return (await db.selectFrom('workers').selectAll().orderBy('name', 'asc').execute()).map(json.decode);
    },
    async deleteStaleBefore(heartbeatBefore: string): Promise<void> {
      await db.deleteFrom('workers').where('heartbeat_at', '<', heartbeatBefore).execute();
    },
  };
}
export type WorkerRepo = ReturnType<typeof createWorkerRepo>;
