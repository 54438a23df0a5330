import type { Migration, MigrationProvider } from 'kysely';
import * as m0001 from './0001_foundation.js';

/** The one migration set, shared by SQLite and PostgreSQL. Append only; never edit a released migration. */
const migrations: Record<string, Migration> = {
  '0001_foundation': m0001,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
