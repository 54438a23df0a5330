// Cron schedules (issue 11): the CRUD service and the scheduler that fires them (ticked by scheduler.ts).
import crypto from 'node:crypto';
import os from 'node:os';
import { createScheduleScheduler, createScheduleService, type Launcher } from '@baton/core';
import type { Database } from '@baton/db';
import type { LaunchingDeps } from '../launching/launching.wiring.js';

export function createScheduleServices(db: Database, deps: LaunchingDeps & { launcher: Launcher }) {
  const { repos, transaction } = db;
  return {
    schedules: createScheduleService({
      schedules: repos.schedules,
      transaction,
      authz: deps.authz,
      clock: deps.clock,
      keyring: deps.keyring,
      launcher: deps.launcher,
    }),
    scheduler: createScheduleScheduler({
      schedules: repos.schedules,
      users: repos.users,
      transaction,
      keyring: deps.keyring,
      launcher: deps.launcher,
      clock: deps.clock,
      // Which replica claimed a slot: host, process and this service stack (tests run two stacks in one process).
      replica: `${os.hostname()}/${process.pid}/${crypto.randomBytes(3).toString('hex')}`,
      reportError: deps.reportError,
    }),
  };
}
