import type { Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';
import type { Schema } from '../schema.js';
import { createDriftRepo } from './drift.repo.js';
import { createFleetRepo } from './fleet.repo.js';
import { createTaskTrendRepo } from './task-trend.repo.js';

/** The observation rollups (fleet and host history, task duration trends, drift): written at ingest, read per request. */
export function createObservationRepo(db: Kysely<Schema>, dialect: DialectName) {
  return { ...createFleetRepo(db, dialect), ...createTaskTrendRepo(db, dialect), ...createDriftRepo(db) };
}
export type ObservationRepo = ReturnType<typeof createObservationRepo>;
