import {
  type BundleHostKeys,
  formatKnownHosts,
  type GitAuth,
  GitError,
  type HostKeyChecking,
  type KnownHostEntry,
  type ProjectCreateBody,
  type ProjectRequirements,
  type ProjectUpdateBody,
} from '@baton/contracts';
import {
  type AuditRepo,
  DuplicateKeyError,
  type GrantRepo,
  type KnownHostRepo,
  type PageQuery,
  type ProjectPatch,
  type ProjectRepo,
  type ProjectRow,
} from '@baton/db';
import { recordAudit } from '../audit/audit.chain.js';
import { grantCreatorManage, notFound } from '../authz/authorize.js';
import type { Authorizer, Principal } from '../authz/authorize.js';
import { type Clock, iso } from '../common/clock.js';
import { ConflictError, UnprocessableError, ValidationError } from '../common/errors.js';
import { inUseConflict } from '../authz/in-use.js';
import { newId } from '../common/ids.js';
import { type Page, toPage, visiblePageQuery } from '../common/paging.js';
import { describeRequirements, type RequirementsText } from './project-requirements.js';
import { knownHostRows } from '../known-hosts/known-host-record.js';

/** The credential types a project may use to reach its repository. */
export const PROJECT_CREDENTIAL_TYPES = ['token', 'ssh_key'] as const;
type ProjectCredentialType = (typeof PROJECT_CREDENTIAL_TYPES)[number];

/** A credential with its inputs in clear text, as the credential service reveals it. Never leaves the server. */
export interface ProjectCredential {
  id: string;
  type: string;
  inputs: Record<string, unknown>;
}

/** What uses a project, and so keeps it from being deleted. */
export interface ProjectUse {
  kind: string;
  id: string;
  name: string;
}

/**
 * How git over SSH checks the project's git server: its policy and stored keys, and where keys ssh recorded on first
 * contact go (stored for the project when its policy is accept_new).
 */
export interface GitHostTrust {
  hostKeys?: BundleHostKeys | undefined;
  onHostKeys?: ((learned: KnownHostEntry[]) => Promise<void>) | undefined;
}

/** Where and what a run checks out: the commit resolved at the last sync, never "whatever the branch is now". */
export interface CheckoutSpec extends GitHostTrust {
  url: string;
  commit: string;
  auth?: GitAuth | undefined;
}

type GitTarget = { url: string; branch: string; auth?: GitAuth | undefined } & GitHostTrust;

type TxRepos = {
  projects: Pick<ProjectRepo, 'insert' | 'update' | 'delete'>;
  grants: Pick<GrantRepo, 'insert' | 'deleteMentioning'>;
  audit: Pick<AuditRepo, 'append'>;
  knownHosts: Pick<KnownHostRepo, 'recordFirstSeen' | 'remove'>;
};

/** The request field a git failure is about, so the problem's `errors` point at what to fix. */
const FIELD_OF_GIT_FAILURE: Record<string, string> = {
  branch_not_found: 'body.branch',
  bad_credential: 'body.credential_id',
  bad_input: 'body.branch',
};

/** A project credential as git auth; a credential of another type is a 409. */
export function toGitAuth(cred: ProjectCredential): GitAuth {
  const { inputs } = cred;
  if (cred.type === 'token') return { kind: 'token', token: String(inputs.token) };
  if (cred.type === 'ssh_key') {
    return {
      kind: 'ssh_key',
      privateKey: String(inputs.private_key),
      passphrase: typeof inputs.passphrase === 'string' ? inputs.passphrase : undefined,
    };
  }
  // requireUsable refuses other types; a credential whose type changed since is a state conflict.
  throw new ConflictError(`credential ${cred.id} is a ${cred.type} credential; a project needs token or ssh_key`);
}

export function createProjectService(deps: {
  projects: Pick<ProjectRepo, 'list' | 'findById'>;
  knownHosts: Pick<KnownHostRepo, 'list'>;
  transaction: <T>(fn: (r: TxRepos) => Promise<T>) => Promise<T>;
  authz: Pick<Authorizer, 'requireCreator' | 'requireVisible' | 'visibleIds' | 'levelOn'>;
  clock: Clock;
  git: {
    resolveBranchHead(opts: GitTarget): Promise<string>;
    /** the Galaxy requirements files at a commit (a sync reports them); absent: sync reports none */
    readRequirements?(opts: CheckoutSpec): Promise<RequirementsText[]>;
  };
  credentials: {
    /** The credential, if `p` may use it and it is of an allowed type (else 404/403, or 400 at `field`). */
    requireUsable(
      p: Principal,
      id: string,
      field: string,
      allowed: readonly (ProjectCredentialType | 'galaxy')[],
    ): Promise<ProjectCredential>;
    /** The credential without a caller check: for a project whose manager already attached it. */
    reveal(id: string): Promise<ProjectCredential>;
  };
  usedBy: (projectId: string) => Promise<ProjectUse[]>;
}) {
  async function visible(p: Principal, id: string, need: 'use' | 'manage'): Promise<ProjectRow> {
    return deps.authz.requireVisible(p, need, { kind: 'project', id, row: await deps.projects.findById(id) });
  }

  /** `p` attaches (or re-aims) this credential, so `p` needs use on it: else a manager could send someone's token anywhere. */
  async function authFor(p: Principal, credentialId: string | null): Promise<GitAuth | undefined> {
    if (credentialId === null) return undefined;
    return toGitAuth(
      await deps.credentials.requireUsable(p, credentialId, 'body.credential_id', PROJECT_CREDENTIAL_TYPES),
    );
  }

  /** `p` attaches this galaxy credential, so `p` needs use on it (its token goes to whatever server it names). */
  async function checkGalaxy(p: Principal, credentialId: string | null | undefined): Promise<void> {
    if (credentialId) await deps.credentials.requireUsable(p, credentialId, 'body.galaxy_credential_id', ['galaxy']);
  }

  /** The project's own credential, already vetted when it was attached. */
  async function storedAuth(project: ProjectRow): Promise<GitAuth | undefined> {
    return project.credential_id === null ? undefined : toGitAuth(await deps.credentials.reveal(project.credential_id));
  }

  /** Keys ssh recorded on first contact with the project's git server, kept when its policy is accept_new. */
  async function recordHostKeys(r: TxRepos, projectId: string, learned: KnownHostEntry[], by: string | null) {
    const origin = { source: 'recorded', run_id: null, created_by: by, created_at: iso(deps.clock()) };
    await r.knownHosts.recordFirstSeen('project', projectId, knownHostRows(learned, 'project', projectId, origin));
  }

  /** The trust of a stored project: its keys, and what ssh records stored at once in a transaction of its own. */
  async function trustOf(project: ProjectRow, by: string | null): Promise<GitHostTrust> {
    const checking = project.host_key_checking as HostKeyChecking;
    const known = checking === 'off' ? [] : await deps.knownHosts.list('project', project.id);
    return {
      hostKeys: { checking, known_hosts: formatKnownHosts(known) },
      onHostKeys:
        checking === 'accept_new'
          ? (learned) => deps.transaction((r) => recordHostKeys(r, project.id, learned, by))
          : undefined,
    };
  }

  /** The requirements at a commit; git's refusal is a 422 with its reason (the head itself resolved a moment ago). */
  async function requirementsAt(spec: CheckoutSpec): Promise<ProjectRequirements[]> {
    if (!deps.git.readRequirements) return [];
    try {
      return describeRequirements(await deps.git.readRequirements(spec));
    } catch (err) {
      if (!(err instanceof GitError)) throw err;
      throw new UnprocessableError(`git could not read the requirements at ${spec.commit}: ${err.reason}`, [
        { path: 'body', message: err.reason },
      ]);
    }
  }

  /** Resolves the branch head; git's refusal is a 422 that carries git's reason. */
  async function resolveHead(target: GitTarget): Promise<string> {
    try {
      return await deps.git.resolveBranchHead(target);
    } catch (err) {
      // The executor's GitError is declared in contracts, so core matches the class without importing the executor.
      if (!(err instanceof GitError)) throw err;
      const path = FIELD_OF_GIT_FAILURE[err.code] ?? 'body.git_url';
      if (err.code === 'refused_url') throw new ValidationError(err.reason, [{ path, message: err.reason }]);
      // Only git's scrubbed reason: the URL is the caller's own input and may carry what the scrubbing removed.
      throw new UnprocessableError(`git could not resolve branch ${target.branch}: ${err.reason}`, [
        { path, message: err.reason },
      ]);
    }
  }

  /** Records the branch head of a project that was never synced (an imported one), as POST .../sync would. */
  async function syncOnFirstUse(p: Principal, project: ProjectRow, auth: GitAuth | undefined): Promise<string> {
    const head = await resolveHead({
      url: project.git_url,
      branch: project.branch,
      auth,
      ...(await trustOf(project, p.id)),
    });
    const at = iso(deps.clock());
    await deps.transaction(async (r) => {
      await r.projects.update(project.id, { last_commit: head, synced_at: at, updated_at: at });
      await recordAudit(
        r.audit,
        {
          actor: p.id,
          action: 'project.sync',
          object: project.id,
          summary: `synced project ${project.name} to ${head} on first use`,
        },
        deps.clock,
      );
    });
    return head;
  }

  async function unique<T>(name: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof DuplicateKeyError) throw new ConflictError(`a project named ${name} already exists`);
      throw err;
    }
  }

  return {
    async create(
      p: Principal,
      body: Omit<ProjectCreateBody, 'host_key_checking'> & { host_key_checking?: HostKeyChecking | undefined },
    ): Promise<ProjectRow> {
      deps.authz.requireCreator(p);
      const auth = await authFor(p, body.credential_id ?? null);
      await checkGalaxy(p, body.galaxy_credential_id);
      const checking = body.host_key_checking ?? 'accept_new';
      // A new project has no stored keys: what ssh records now is kept with it (accept_new), in the same transaction.
      const learned: KnownHostEntry[] = [];
      const head = await resolveHead({
        url: body.git_url,
        branch: body.branch,
        auth,
        hostKeys: { checking, known_hosts: '' },
        onHostKeys: async (keys) => void learned.push(...keys),
      });
      const now = deps.clock();
      const at = iso(now);
      const project: ProjectRow = {
        id: newId('prj', now.getTime()),
        name: body.name,
        git_url: body.git_url,
        branch: body.branch,
        credential_id: body.credential_id ?? null,
        host_key_checking: checking,
        galaxy_credential_id: body.galaxy_credential_id ?? null,
        last_commit: head,
        synced_at: at,
        created_by: p.id,
        created_at: at,
        updated_at: at,
      };
      await unique(body.name, () =>
        deps.transaction(async (r) => {
          await r.projects.insert(project);
          if (checking === 'accept_new' && learned.length > 0) await recordHostKeys(r, project.id, learned, p.id);
          await grantCreatorManage(r.grants, p, project.id, now);
          await recordAudit(
            r.audit,
            {
              actor: p.id,
              action: 'project.create',
              object: project.id,
              summary: `created project ${project.name} at ${head}`,
            },
            deps.clock,
          );
        }),
      );
      return project;
    },

    /** Admins see every project; others those they hold a grant on (directly or through a team). */
    async list(p: Principal, page: PageQuery & { cursor?: string | undefined }): Promise<Page<ProjectRow>> {
      const rows = await deps.projects.list(visiblePageQuery(page, await deps.authz.visibleIds(p, 'prj')));
      return toPage(rows, page.limit, (x) => x.id);
    },

    get(p: Principal, id: string): Promise<ProjectRow> {
      return visible(p, id, 'use');
    },

    /**
     * Re-resolves the branch head and reports the Galaxy requirements at it. Needs use on the project, and a role that
     * may change things.
     */
    async sync(p: Principal, id: string): Promise<ProjectRow & { requirements: ProjectRequirements[] }> {
      const project = await visible(p, id, 'use');
      deps.authz.requireCreator(p);
      const auth = await storedAuth(project);
      const trust = await trustOf(project, p.id);
      const head = await resolveHead({ url: project.git_url, branch: project.branch, auth, ...trust });
      const requirements = await requirementsAt({ url: project.git_url, commit: head, auth, ...trust });
      const at = iso(deps.clock());
      const patch: ProjectPatch = { last_commit: head, synced_at: at, updated_at: at };
      await deps.transaction(async (r) => {
        if (!(await r.projects.update(id, patch))) throw notFound('project', id);
        await recordAudit(
          r.audit,
          { actor: p.id, action: 'project.sync', object: id, summary: `synced project ${project.name} to ${head}` },
          deps.clock,
        );
      });
      return { ...project, ...patch, requirements };
    },

    async update(p: Principal, id: string, body: ProjectUpdateBody): Promise<ProjectRow> {
      const project = await visible(p, id, 'manage');
      const next = {
        name: body.name ?? project.name,
        git_url: body.git_url ?? project.git_url,
        branch: body.branch ?? project.branch,
        credential_id: body.credential_id === undefined ? project.credential_id : body.credential_id,
        host_key_checking: body.host_key_checking ?? project.host_key_checking,
        galaxy_credential_id:
          body.galaxy_credential_id === undefined ? project.galaxy_credential_id : body.galaxy_credential_id,
      };
      if (next.galaxy_credential_id !== project.galaxy_credential_id) await checkGalaxy(p, next.galaxy_credential_id);
      const at = iso(deps.clock());
      const patch: ProjectPatch = { ...next, updated_at: at };
      const retarget =
        next.git_url !== project.git_url ||
        next.branch !== project.branch ||
        next.credential_id !== project.credential_id;
      if (retarget) {
        const auth = await authFor(p, next.credential_id);
        const trust = await trustOf({ ...project, host_key_checking: next.host_key_checking }, p.id);
        patch.last_commit = await resolveHead({ url: next.git_url, branch: next.branch, auth, ...trust });
        patch.synced_at = at;
      }
      const changed = (Object.keys(next) as Array<keyof typeof next>).filter((k) => next[k] !== project[k]);
      await unique(next.name, () =>
        deps.transaction(async (r) => {
          if (!(await r.projects.update(id, patch))) throw notFound('project', id);
          const what = changed.length ? `changed ${changed.join(', ')}` : 'no field changed';
          await recordAudit(
            r.audit,
            { actor: p.id, action: 'project.update', object: id, summary: `updated project ${next.name}: ${what}` },
            deps.clock,
          );
        }),
      );
      return { ...project, ...patch };
    },

    /** Deletes the project and the grants on it; 409 naming whatever still uses it. */
    async remove(p: Principal, id: string): Promise<void> {
      const project = await visible(p, id, 'manage');
      const uses = await deps.usedBy(id);
      const conflict = await inUseConflict(p, `project ${id}`, uses, deps.authz);
      if (conflict) throw conflict;
      await deps.transaction(async (r) => {
        await r.grants.deleteMentioning(id);
        await r.knownHosts.remove('project', id);
        const result = await r.projects.delete(id);
        if (result === 'missing') throw notFound('project', id);
        // A reference added since usedBy answered: the foreign key still refuses the delete.
        if (result === 'in_use') throw new ConflictError(`project ${id} is still referenced; remove its uses first`);
        await recordAudit(
          r.audit,
          { actor: p.id, action: 'project.delete', object: id, summary: `deleted project ${project.name}` },
          deps.clock,
        );
      });
    },

    /**
     * INTERNAL (never over HTTP), for the run engine and inventory sources: what to check out for a run that
     * `p` submits from this project, i.e. the commit of the last sync. Secrets inside: never log or return it.
     */
    async checkoutSpec(p: Principal, projectId: string): Promise<CheckoutSpec> {
      const project = await visible(p, projectId, 'use');
      const auth = await storedAuth(project);
      const commit = project.last_commit ?? (await syncOnFirstUse(p, project, auth));
      return { url: project.git_url, commit, auth, ...(await trustOf(project, p.id)) };
    },

    /**
     * INTERNAL, for submitting a run: the project's repository and branch, whose head the run resolves and records
     * (needs `use` on the project). Secrets inside: never log or return it.
     */
    async playbookSource(p: Principal, projectId: string): Promise<GitTarget> {
      const project = await visible(p, projectId, 'use');
      const auth = await storedAuth(project);
      // A never-synced (imported) project syncs on its first run; if git refuses, the run's own resolution says why.
      if (project.last_commit === null)
        await syncOnFirstUse(p, project, auth).catch((err: unknown) => {
          if (!(err instanceof UnprocessableError) && !(err instanceof ValidationError)) throw err;
        });
      return { url: project.git_url, branch: project.branch, auth, ...(await trustOf(project, p.id)) };
    },

    /** INTERNAL, for run bundles: the project's policy and stored keys for git over SSH. */
    async hostKeysOf(project: ProjectRow): Promise<BundleHostKeys> {
      return (await trustOf(project, null)).hostKeys!;
    },
  };
}
export type ProjectService = ReturnType<typeof createProjectService>;
