import {
  type Authorizer,
  createDriftService,
  type Keyring,
  openSealedJson,
  createFleetService,
  createTaskTrendService,
  type Principal,
  type RunAccess,
} from '@baton/core';
import type { Database } from '@baton/db';
import type { Run, SubmitRunBody } from '@baton/contracts';
import type { LaunchContext } from '@baton/core';

/** Fleet health, host history, task trends and drift over the rollups the ingester keeps. */
export function createObservationServices(
  db: Pick<Database, 'repos' | 'transaction'>,
  deps: {
    access: Pick<RunAccess, 'visibility' | 'visibleRun'>;
    authz: Pick<Authorizer, 'requireCreator'>;
    keyring: Keyring;
    submit: (p: Principal, body: SubmitRunBody, ctx: LaunchContext) => Promise<Run>;
  },
) {
  const { observation } = db.repos;
  return {
    fleet: createFleetService({ observation, access: deps.access }),
    taskTrends: createTaskTrendService({ observation, access: deps.access }),
    drift: createDriftService({
      observation,
      access: deps.access,
      authz: deps.authz,
      openSecrets: (sealed) => openSealedJson<Record<string, string>>(deps.keyring, sealed),
      submit: deps.submit,
      transaction: db.transaction,
    }),
  };
}
