// Turning a run spec into run rows (issue 4 "Submitting", issue 11 "One submission path"): every check a submission
// makes (grants, git, ansible-inventory, shards), in the order that answers 404/403 before any slow work. Used by
// POST /v1/runs and, per step, by pipelines; templates, schedules and triggers reach it through those.
import {
  GitError,
  HostPatternError,
  type InventoryFormat,
  InventoryParseError,
  type SubmitRunBody,
} from '@baton/contracts';
import type { RunRow } from '@baton/db';
import type { Principal } from '../authz/authorize.js';
import { UnprocessableError, ValidationError } from '../common/errors.js';
import { newId } from '../common/ids.js';
import type { CredentialService } from '../credentials/credential.service.js';
import type { InventoryService } from '../inventories/inventory.service.js';
import type { ProjectService } from '../projects/project.service.js';
import { ENCRYPTED_PLACEHOLDER, type LaunchContext } from './run-launch.js';
import {
  checkHostLimit,
  checkNoDuplicateCredentials,
  freshRunState,
  projectPlaybookPath,
  RUN_CREDENTIAL_TYPES,
  shardHosts,
} from './run-rows.js';

type GitTarget = Awaited<ReturnType<ProjectService['playbookSource']>>;

/**
 * The executor's resolvePlaybookAtBranch, injected: core never imports the executor. With `ref`, the branch, tag or
 * commit named instead of the branch head. Fails with a GitError.
 */
export type PlaybookResolver = (
  opts: GitTarget & { path: string; ref?: string | undefined },
) => Promise<{ commit: string; entry: 'file' | 'symlink' | 'directory' | 'missing' }>;

/** The executor's inventory functions, injected. Failures are InventoryParseError or HostPatternError (declared in contracts). */
export interface InventoryTool {
  parse(content: string): Promise<{ format: InventoryFormat }>;
  hosts(opts: {
    content: string;
    limit?: string | undefined;
  }): Promise<{ hosts: string[]; list: Record<string, unknown> }>;
  forHosts(list: Record<string, unknown>, hosts: string[]): string;
}

export interface RunPreparerDeps {
  projects: Pick<ProjectService, 'playbookSource'>;
  resolvePlaybook: PlaybookResolver;
  inventories: Pick<InventoryService, 'requireUsable'>;
  credentials: Pick<CredentialService, 'requireUsable'>;
  inventoryTool: InventoryTool;
  /** seals a run's secret vars under the master key (the credential seal) */
  seal: (plaintext: string) => string;
}

/** A prepared run: its rows (a split before its shards) and the words of its audit summary. */
export interface PreparedRun {
  base: RunRow;
  rows: RunRow[];
  what: string[];
  /** the hosts it targets after limit (asks ansible-inventory once, and only when called: approval policies' host globs) */
  hosts: () => Promise<string[]>;
}

/** Where a spec's fields sit in the request, for error paths: `body` for POST /v1/runs, `body.steps.2` for a step. */
export interface PrepareOptions {
  at: Date;
  /** the request path of the spec's fields (default `body`) */
  field?: string;
}

export function createRunPreparer(deps: RunPreparerDeps) {
  /** The commit of the branch head (or `ref`) and the playbook in it; git's refusal is a 422 with git's (scrubbed) reason. */
  async function resolveProjectPlaybook(
    projectId: string,
    source: GitTarget,
    path: string,
    ref: string | undefined,
    field: string,
  ): Promise<string> {
    let found: Awaited<ReturnType<PlaybookResolver>>;
    try {
      found = await deps.resolvePlaybook({ ...source, path, ...(ref !== undefined ? { ref } : {}) });
    } catch (err) {
      if (!(err instanceof GitError)) throw err;
      if (err.code === 'ref_not_found' || (ref !== undefined && err.code === 'bad_input')) {
        const message = `${ref} is not a branch, tag or commit of project ${projectId}`;
        throw new UnprocessableError(message, [{ path: `${field}.ref`, message: err.reason }]);
      }
      const what = ref === undefined ? `branch ${source.branch}` : `ref ${ref}`;
      throw new UnprocessableError(`git could not fetch ${what} of project ${projectId}: ${err.reason}`, [
        { path: `${field}.project_id`, message: err.reason },
      ]);
    }
    if (found.entry === 'missing' || found.entry === 'directory') {
      const message =
        found.entry === 'missing'
          ? `${path} does not exist in project ${projectId} at commit ${found.commit}`
          : `${path} is a directory in project ${projectId} at commit ${found.commit}, not a playbook`;
      throw new UnprocessableError(message, [{ path: `${field}.playbook`, message }]);
    }
    return found.commit;
  }

  async function parseInline(content: string, field: string): Promise<InventoryFormat> {
    try {
      return (await deps.inventoryTool.parse(content)).format;
    } catch (err) {
      if (!(err instanceof InventoryParseError)) throw err;
      throw new ValidationError(err.message, [{ path: `${field}.inventory`, message: err.message }]);
    }
  }

  async function targetHosts(
    content: string,
    limit: string | undefined,
    inline: boolean,
    field: string,
  ): Promise<{ hosts: string[]; list: Record<string, unknown> }> {
    try {
      return await deps.inventoryTool.hosts({ content, limit });
    } catch (err) {
      if (err instanceof HostPatternError)
        throw new ValidationError(err.message, [{ path: `${field}.limit`, message: err.message }]);
      if (!(err instanceof InventoryParseError)) throw err;
      if (inline) throw new ValidationError(err.message, [{ path: `${field}.inventory`, message: err.message }]);
      throw new UnprocessableError(`ansible-inventory no longer reads the stored inventory: ${err.message}`, [
        { path: `${field}.inventory_id`, message: err.message },
      ]);
    }
  }

  /** Field errors of a spec, prefixed with where it sits in the request. */
  const at = (field: string, err: unknown): unknown => {
    if (field === 'body' || !(err instanceof ValidationError)) return err;
    return new ValidationError(
      err.message,
      (err.errors ?? []).map((e) => ({ ...e, path: e.path.replace(/^body/, field) })),
    );
  };

  /**
   * Checks a run spec as `p` submits it (with `ctx.authority`'s grants when given) and builds its rows: the run, or a
   * split and its shards. Nothing is stored.
   */
  async function prepare(
    p: Principal,
    body: SubmitRunBody,
    ctx: LaunchContext,
    opts: PrepareOptions,
  ): Promise<PreparedRun> {
    const field = opts.field ?? 'body';
    const authority = ctx.authority ?? p;
    if ((body.inventory_id === undefined) === (body.inventory === undefined)) {
      const message = 'give exactly one of inventory_id and inventory (inline content)';
      throw new ValidationError(message, [{ path: `${field}.inventory_id`, message }]);
    }
    if (body.ref !== undefined && body.project_id === undefined) {
      const message = 'ref needs project_id: an inline playbook has no git history';
      throw new ValidationError(message, [{ path: `${field}.ref`, message }]);
    }
    const credentialIds = body.credential_ids ?? [];
    let playbookPath: string | undefined;
    try {
      checkNoDuplicateCredentials(credentialIds);
      checkHostLimit(body.limit);
      playbookPath = body.project_id === undefined ? undefined : projectPlaybookPath(body.playbook);
    } catch (err) {
      throw at(field, err);
    }

    // Access first (404/403 before any slow work), then git and ansible.
    const source =
      body.project_id === undefined ? undefined : await deps.projects.playbookSource(authority, body.project_id);
    const inventory =
      body.inventory_id === undefined ? undefined : await deps.inventories.requireUsable(authority, body.inventory_id);
    for (const [i, id] of credentialIds.entries())
      await deps.credentials.requireUsable(authority, id, `${field}.credential_ids.${i}`, RUN_CREDENTIAL_TYPES);
    const commit =
      source && playbookPath !== undefined
        ? await resolveProjectPlaybook(body.project_id!, source, playbookPath, body.ref, field)
        : null;
    const inlineFormat = body.inventory === undefined ? null : await parseInline(body.inventory, field);

    const shardCount = body.shards !== undefined && body.shards >= 2 ? body.shards : 1;
    const content = inventory?.content ?? body.inventory!;
    const targets = shardCount > 1 ? await targetHosts(content, body.limit, inventory === undefined, field) : undefined;
    if (targets && shardCount > targets.hosts.length) {
      const message = `${shardCount} shards need at least ${shardCount} hosts, but ${targets.hosts.length} host${targets.hosts.length === 1 ? '' : 's'} match${body.limit ? ` the limit ${body.limit}` : ''}`;
      throw new ValidationError(message, [{ path: `${field}.shards`, message }]);
    }

    const now = opts.at;
    const secretNames = Object.keys(ctx.secretVars ?? {});
    const extraVars =
      body.extra_vars === undefined && secretNames.length === 0
        ? null
        : {
            ...body.extra_vars,
            ...Object.fromEntries(secretNames.map((k) => [k, ENCRYPTED_PLACEHOLDER])),
          };
    const base: RunRow = {
      id: newId('run', now.getTime()),
      kind: 'run',
      parent_id: null,
      shard_index: null,
      shard_count: null,
      retry_of: null,
      playbook_source: source ? 'project' : 'inline',
      playbook: playbookPath ?? body.playbook,
      project_id: body.project_id ?? null,
      git_commit: commit,
      git_ref: body.ref ?? null,
      origin: ctx.origin,
      template_id: ctx.templateId ?? null,
      schedule_id: ctx.scheduleId ?? null,
      trigger_id: ctx.triggerId ?? null,
      step_index: null,
      step_name: null,
      run_if: null,
      survey_answers: ctx.surveyAnswers ?? null,
      secret_vars_enc: secretNames.length ? deps.seal(JSON.stringify(ctx.secretVars)) : null,
      inventory_id: body.inventory_id ?? null,
      inventory_content: body.inventory ?? null,
      inventory_format: inlineFormat,
      host_limit: body.limit ?? null,
      hosts: null,
      extra_vars: extraVars,
      credential_ids: credentialIds,
      check_mode: body.check ? 1 : 0,
      forks: body.forks ?? null,
      verbosity: body.verbosity ?? null,
      timeout_s: body.timeout_s ?? null,
      labels: [...new Set(body.labels ?? [])].sort(),
      ...freshRunState(p, now.toISOString()),
    };
    const rows: RunRow[] = [base];
    if (targets) {
      base.kind = 'split';
      base.shard_count = shardCount;
      shardHosts(targets.hosts, shardCount).forEach((hosts, k) => {
        rows.push({
          ...base,
          id: newId('run', now.getTime()),
          kind: 'shard',
          parent_id: base.id,
          shard_index: k,
          shard_count: shardCount,
          hosts,
          inventory_content: deps.inventoryTool.forHosts(targets.list, hosts),
          inventory_format: 'yaml',
        });
      });
    }

    const what = [
      source
        ? `playbook ${base.playbook} of project ${body.project_id} at ${commit}${body.ref !== undefined ? ` (${body.ref})` : ''}`
        : 'an inline playbook',
      body.inventory_id ? `inventory ${body.inventory_id}` : 'an inline inventory',
      ...(body.limit ? [`limit ${body.limit}`] : []),
      ...(credentialIds.length ? [`credentials ${credentialIds.join(', ')}`] : []),
      ...(extraVars ? [`${Object.keys(extraVars).length} extra vars`] : []),
      ...(body.check ? ['check mode'] : []),
      ...(targets ? [`${shardCount} shards`] : []),
      ...(body.labels?.length ? [`worker labels ${[...new Set(body.labels)].sort().join(', ')}`] : []),
    ];
    let hosts: Promise<string[]> | undefined;
    const targetHostsOnce = () =>
      (hosts ??= targets
        ? Promise.resolve(targets.hosts)
        : targetHosts(content, body.limit, inventory === undefined, field).then((t) => t.hosts));
    return { base, rows, what, hosts: targetHostsOnce };
  }

  return { prepare };
}
export type RunPreparer = ReturnType<typeof createRunPreparer>;

/** The words an audit summary uses for how a run started, when not through POST /v1/runs. */
export function originWords(ctx: LaunchContext): string {
  const by = [
    ctx.templateId && `template ${ctx.templateId}`,
    ctx.scheduleId && `schedule ${ctx.scheduleId}`,
    ctx.triggerId && `trigger ${ctx.triggerId}`,
  ].filter(Boolean);
  return ctx.origin === 'api' ? '' : ` (origin ${ctx.origin}${by.length ? `: ${by.join(', ')}` : ''})`;
}
