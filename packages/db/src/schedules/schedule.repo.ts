import type { Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';
import type { Schema } from '../schema.js';

// Filled in by the schedules domain (issue 11).
export function createScheduleRepo(db: Kysely<Schema>, dialect: DialectName) {
  void db;
  void dialect;
  return {};
}
export type ScheduleRepo = ReturnType<typeof createScheduleRepo>;
