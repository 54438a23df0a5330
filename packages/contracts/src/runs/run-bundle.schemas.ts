import { z } from 'zod';
import { CREDENTIAL_INPUTS } from '../credentials/credential.schemas.js';
import { BundleHostKeys } from '../known-hosts/known-host.schemas.js';

/**
 * The sealed run bundle (ARCHITECTURE.md, "A run's path" step 2): everything an executor needs to run one
 * playbook, and nothing it must look up. The API builds it at dispatch; in queue mode it travels encrypted
 * under BATON_WORKER_KEY. It holds revealed secrets, so it is never logged, stored or returned.
 */
const GitAuthSchema = z.union([
  z.object({ kind: z.literal('token'), token: z.string(), username: z.string().optional() }),
  z.object({ kind: z.literal('ssh_key'), privateKey: z.string(), passphrase: z.string().optional() }),
]);

export const BundleCredential = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ssh_key'), inputs: CREDENTIAL_INPUTS.ssh_key }),
  z.object({ type: z.literal('vault_password'), inputs: CREDENTIAL_INPUTS.vault_password }),
  z.object({ type: z.literal('env'), inputs: CREDENTIAL_INPUTS.env }),
  z.object({ type: z.literal('become_password'), inputs: CREDENTIAL_INPUTS.become_password }),
]);
export type BundleCredential = z.infer<typeof BundleCredential>;

export const RunBundle = z.object({
  run_id: z.string(),
  /** inline YAML, or a path inside a project checked out at the commit resolved at submit time */
  playbook: z.discriminatedUnion('source', [
    z.object({ source: z.literal('inline'), content: z.string() }),
    z.object({
      source: z.literal('project'),
      path: z.string(),
      /** keys the executor's Galaxy requirements cache (one directory per project) */
      project_id: z.string().optional(),
      /** the project's Galaxy server, from its galaxy credential: requirements install from it */
      galaxy: z.object({ server_url: z.string(), token: z.string().optional() }).optional(),
      git: z.object({
        url: z.string(),
        commit: z.string(),
        auth: GitAuthSchema.optional(),
        /** the project's policy and stored keys for git over SSH */
        host_keys: BundleHostKeys.optional(),
      }),
    }),
  ]),
  /** the inventory to run against, already narrowed to the shard's hosts where the run is a shard */
  inventory: z.object({
    content: z.string(),
    format: z.enum(['ini', 'yaml', 'json']),
    /** the inventory's policy and stored keys; absent for inline inventories (keys accepted on first contact, not kept) */
    host_keys: BundleHostKeys.optional(),
  }),
  limit: z.string().optional(),
  /** sealed secret vars (survey password answers) are in here in clear: the executor masks them (secret_values) */
  extra_vars: z.record(z.string(), z.unknown()).optional(),
  /** values the executor masks in every event and log chunk, like credential secrets (survey password answers) */
  secret_values: z.array(z.string()).optional(),
  check: z.boolean().default(false),
  forks: z.number().int().positive().optional(),
  verbosity: z.number().int().min(0).max(4).optional(),
  timeout_s: z.number().int().positive().optional(),
  credentials: z.array(BundleCredential).default([]),
});
export type RunBundle = z.infer<typeof RunBundle>;
