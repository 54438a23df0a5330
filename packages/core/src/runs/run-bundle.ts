// The run bundle (ARCHITECTURE.md, "A run's path" step 2): everything an executor needs for one run, looked up
// at dispatch, so a run uses the inventory and credentials as they are when it starts. Holds secrets in clear:
// never log, store or return it.
import {
  type BundleCredential,
  type BundleHostKeys,
  formatKnownHosts,
  type HostKeyChecking,
  type RunBundle,
} from '@baton/contracts';
import type { InventoryRepo, KnownHostRepo, KnownHostScope, ProjectRepo, RunRepo, RunRow } from '@baton/db';
import { ConflictError, NotFoundError, RunInputMissingError, UnprocessableError } from '../common/errors.js';
import type { CredentialService, RevealedCredential } from '../credentials/credential.service.js';
import { toGitAuth } from '../projects/project.service.js';
import { isDispatchable } from './run-rows.js';

export interface RunBundleBuilderDeps {
  runs: Pick<RunRepo, 'findById'>;
  projects: Pick<ProjectRepo, 'findById'>;
  inventories: Pick<InventoryRepo, 'findById'>;
  knownHosts: Pick<KnownHostRepo, 'list'>;
  credentials: Pick<CredentialService, 'reveal'>;
  /**
   * Opens a run's sealed secret vars (runs.secret_vars_enc: survey password answers) with the master key. Needed
   * only by runs that have them.
   */
  openSecret?: ((sealed: string) => string) | undefined;
}

const BUNDLE_CREDENTIAL_TYPES: ReadonlySet<string> = new Set(['ssh_key', 'become_password', 'vault_password', 'env']);
const INVENTORY_FORMATS: ReadonlySet<string> = new Set(['ini', 'yaml', 'json']);

export function createRunBundleBuilder(deps: RunBundleBuilderDeps) {
  /** The owner's policy and its stored keys, as they are now (a key pinned after submit applies). */
  async function hostKeys(scope: KnownHostScope, id: string, checking: string): Promise<BundleHostKeys> {
    const policy = checking as HostKeyChecking;
    const known = policy === 'off' ? [] : await deps.knownHosts.list(scope, id);
    return { checking: policy, known_hosts: formatKnownHosts(known) };
  }

  /** The credential as it is now; one deleted since the run was submitted is a missing input. */
  async function reveal(id: string, of: string): Promise<RevealedCredential> {
    try {
      return await deps.credentials.reveal(id);
    } catch (err) {
      if (err instanceof NotFoundError) throw new RunInputMissingError(`credential ${id} ${of} no longer exists`);
      // Its secret was never set (an imported credential): as missing as a deleted one.
      if (err instanceof UnprocessableError) throw new RunInputMissingError(err.message);
      throw err;
    }
  }

  async function playbookOf(run: RunRow): Promise<RunBundle['playbook']> {
    if (run.playbook_source === 'inline') return { source: 'inline', content: run.playbook };
    if (!run.project_id || !run.git_commit)
      throw new ConflictError(`run ${run.id} has a project playbook without a project or commit`);
    const project = await deps.projects.findById(run.project_id);
    if (!project) throw new RunInputMissingError(`project ${run.project_id} of run ${run.id} no longer exists`);
    // The project's current credential: a rotated token or key applies to runs already queued.
    const auth =
      project.credential_id === null
        ? undefined
        : toGitAuth(await reveal(project.credential_id, `of project ${project.id}`));
    // The project's Galaxy server, as its credential is now.
    const galaxy =
      project.galaxy_credential_id === null
        ? undefined
        : galaxyServerOf(await reveal(project.galaxy_credential_id, `of project ${project.id}`));
    return {
      source: 'project',
      path: run.playbook,
      project_id: project.id,
      ...(galaxy ? { galaxy } : {}),
      git: {
        url: project.git_url,
        commit: run.git_commit,
        ...(auth ? { auth } : {}),
        host_keys: await hostKeys('project', project.id, project.host_key_checking),
      },
    };
  }

  async function inventoryOf(run: RunRow): Promise<RunBundle['inventory']> {
    // Shards and inline inventories carry their content; an inventory by id is read as it is now. A shard checks
    // host keys against its inventory's (it keeps the id); an inline inventory has none stored.
    const inventory = run.inventory_id === null ? undefined : await deps.inventories.findById(run.inventory_id);
    const keys = inventory && (await hostKeys('inventory', inventory.id, inventory.host_key_checking));
    if (run.inventory_content !== null)
      return {
        content: run.inventory_content,
        format: formatOf(run.inventory_format, run.id),
        ...(keys ? { host_keys: keys } : {}),
      };
    if (!run.inventory_id) throw new ConflictError(`run ${run.id} has no inventory`);
    if (!inventory) throw new RunInputMissingError(`inventory ${run.inventory_id} of run ${run.id} no longer exists`);
    return { content: inventory.content, format: formatOf(inventory.format, run.id), host_keys: keys };
  }

  async function credentialsOf(run: RunRow): Promise<BundleCredential[]> {
    const out: BundleCredential[] = [];
    for (const id of run.credential_ids) {
      const cred = await reveal(id, `of run ${run.id}`);
      if (!BUNDLE_CREDENTIAL_TYPES.has(cred.type))
        throw new ConflictError(`credential ${id} is a ${cred.type} credential, which a run cannot use`);
      out.push({ type: cred.type, inputs: cred.inputs } as BundleCredential);
    }
    return out;
  }

  /**
   * The run's extra vars with its sealed secret vars in clear in place of their `$encrypted$` placeholders, and
   * those values (for the executor to mask in every event, as it masks credential secrets).
   */
  function extraVarsOf(run: RunRow): Pick<RunBundle, 'extra_vars' | 'secret_values'> {
    if (run.secret_vars_enc === null) return run.extra_vars !== null ? { extra_vars: run.extra_vars } : {};
    if (!deps.openSecret) throw new ConflictError(`run ${run.id} has sealed vars, but nothing here can open them`);
    const secrets = JSON.parse(deps.openSecret(run.secret_vars_enc)) as Record<string, unknown>;
    const values = Object.values(secrets).filter((v): v is string => typeof v === 'string');
    return { extra_vars: { ...run.extra_vars, ...secrets }, secret_values: [...new Set(values)] };
  }

  return {
    async build(runId: string): Promise<RunBundle> {
      const run = await deps.runs.findById(runId);
      if (!run) throw new NotFoundError(`run ${runId} not found`);
      if (!isDispatchable(run))
        throw new ConflictError(
          `run ${runId} is a ${run.kind}${run.kind === 'step' ? ' split into shards' : ''}: only its children run`,
        );
      const [playbook, inventory, credentials] = [
        await playbookOf(run),
        await inventoryOf(run),
        await credentialsOf(run),
      ];
      return {
        run_id: run.id,
        playbook,
        inventory,
        // A shard's inventory holds only its hosts already; its limit is shown, never passed to ansible.
        ...(run.host_limit !== null && run.kind !== 'shard' ? { limit: run.host_limit } : {}),
        ...extraVarsOf(run),
        check: run.check_mode === 1,
        ...(run.forks !== null ? { forks: run.forks } : {}),
        ...(run.verbosity !== null ? { verbosity: run.verbosity } : {}),
        ...(run.timeout_s !== null ? { timeout_s: run.timeout_s } : {}),
        credentials,
      };
    },
  };
}
export type RunBundleBuilder = ReturnType<typeof createRunBundleBuilder>;

/** A galaxy credential as the bundle carries it; another type here is a state conflict. */
function galaxyServerOf(cred: RevealedCredential): { server_url: string; token?: string } {
  if (cred.type !== 'galaxy')
    throw new ConflictError(
      `credential ${cred.id} is a ${cred.type} credential; a project's Galaxy server needs galaxy`,
    );
  const inputs = cred.inputs as { url: string; token?: string };
  return { server_url: inputs.url, ...(inputs.token ? { token: inputs.token } : {}) };
}

function formatOf(format: string | null, runId: string): RunBundle['inventory']['format'] {
  if (format !== null && INVENTORY_FORMATS.has(format)) return format as RunBundle['inventory']['format'];
  throw new ConflictError(`run ${runId} has an inventory of unknown format ${format}`);
}
