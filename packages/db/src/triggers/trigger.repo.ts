import type { Kysely } from 'kysely';
import type { Schema } from '../schema.js';

// Filled in by the triggers domain (issue 11).
export function createTriggerRepo(db: Kysely<Schema>) {
  void db;
  return {};
}
export type TriggerRepo = ReturnType<typeof createTriggerRepo>;
