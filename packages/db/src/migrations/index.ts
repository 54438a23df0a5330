import type { Migration, MigrationProvider } from 'kysely';
import * as m0001 from './0001_foundation.js';
import * as m0002 from './0002_inputs.js';
import * as m0003 from './0003_runs.js';
import * as m0004 from './0004_launching.js';
import * as m0005 from './0005_governance.js';
import * as m0006 from './0006_observation.js';
import * as m0007 from './0007_fleet_windows.js';
import * as m0008 from './0008_ai.js';
import * as m0009 from './0009_notifications.js';
import * as m0010 from './0010_host_trust.js';
import * as m0011 from './0011_output_limits.js';
import * as m0012 from './0012_retention.js';
import * as m0013 from './0013_worker_paused.js';

/** The one migration set, shared by SQLite and PostgreSQL. Append only; never edit a released migration. */
const migrations: Record<string, Migration> = {
  '0001_foundation': m0001,
  '0002_inputs': m0002,
  '0003_runs': m0003,
  '0004_launching': m0004,
  '0005_governance': m0005,
  '0006_observation': m0006,
  '0007_fleet_windows': m0007,
  '0008_ai': m0008,
  '0009_notifications': m0009,
  '0010_host_trust': m0010,
  '0011_output_limits': m0011,
  '0012_retention': m0012,
  '0013_worker_paused': m0013,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
