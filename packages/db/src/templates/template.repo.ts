import type { Kysely } from 'kysely';
import type { Schema } from '../schema.js';

// Filled in by the templates domain (issue 11).
export function createTemplateRepo(db: Kysely<Schema>) {
  void db;
  return {};
}
export type TemplateRepo = ReturnType<typeof createTemplateRepo>;
