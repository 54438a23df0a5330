// Filled in by the triggers domain (issue 11).
import type { Launcher } from '@baton/core';
import type { Database } from '@baton/db';
import type { LaunchingDeps } from '../launching/launching.wiring.js';

export function createTriggerServices(db: Database, deps: LaunchingDeps & { launcher: Launcher }) {
  void db;
  void deps;
  return {};
}
