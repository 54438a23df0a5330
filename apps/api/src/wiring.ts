import type crypto from 'node:crypto';
import {
  createAuditService, createAuthService, createAuthorizer, createGrantService, createLoginThrottle, createSigningKeyStore,
  createTeamService, createUserService, type Clock, DEFAULT_THROTTLE, type Keyring, type ThrottleLimits,
} from '@baton/core';
import type { Database } from '@baton/db';

export interface ServiceOptions {
  keyring: Keyring;
  clock: Clock;
  tokenTtlSeconds: number;
  throttle?: ThrottleLimits | undefined;
  auditSigningKey?: crypto.KeyObject | undefined;
}

/** The composition root of the domain layer: every service gets exactly the repositories it uses. */
export function createServices(db: Database, opts: ServiceOptions) {
  const { repos, transaction } = db;
  const clock = opts.clock;
  const authz = createAuthorizer({ grants: repos.grants, teams: repos.teams });
  const signingKeys = createSigningKeyStore({ serverKeys: repos.serverKeys, keyring: opts.keyring, clock, configured: opts.auditSigningKey });
  const users = createUserService({ users: repos.users, transaction, authz, clock });
  return {
    authz,
    users,
    auth: createAuthService({
      users: repos.users, tokens: repos.tokens, transaction, clock, tokenTtlSeconds: opts.tokenTtlSeconds,
      throttle: createLoginThrottle(opts.throttle ?? DEFAULT_THROTTLE, clock),
    }),
    teams: createTeamService({ teams: repos.teams, transaction, authz, clock }),
    grants: createGrantService({
      grants: repos.grants, users: repos.users, teams: repos.teams, transaction, authz, clock,
      // Each domain that owns grantable objects adds its prefix here.
      grantable: { team: async (id) => Boolean(await repos.teams.findById(id)) },
    }),
    audit: createAuditService({ audit: repos.audit, signingKeys, clock }),
    signingKeys,
  };
}
export type Services = ReturnType<typeof createServices>;
