// Approval policies (issue 12): admins create, change and delete them; operators and admins read them. Which runs a
// policy holds is decided at submit (policy-match.ts); editing or deleting a policy never releases a run it holds,
// because each held run keeps the policies as they were when it was held.
import type { Policy, PolicyApprovers, PolicyCreateBody, PolicyMatch, PolicyUpdateBody } from '@baton/contracts';
import {
  type AuditRepo,
  DuplicateKeyError,
  type InventoryRepo,
  type PageQuery,
  type PolicyPatch,
  type PolicyRepo,
  type PolicyRow,
  type ProjectRepo,
  type TeamRepo,
  type TemplateRepo,
  type UserRepo,
} from '@baton/db';
import { recordAudit } from '../audit/audit.chain.js';
import { type Authorizer, notFound, type Principal } from '../authz/authorize.js';
import { type Clock, iso } from '../common/clock.js';
import { ConflictError, type FieldError, ForbiddenError, UnprocessableError } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { decodeCursor, type Page, toPage } from '../common/paging.js';

export * from './policy-match.js';

type TxRepos = {
  policies: Pick<PolicyRepo, 'insert' | 'update' | 'delete'>;
  audit: Pick<AuditRepo, 'append'>;
};

export interface PolicyServiceDeps {
  policies: Pick<PolicyRepo, 'findById' | 'list'>;
  users: Pick<UserRepo, 'findById'>;
  teams: Pick<TeamRepo, 'findById'>;
  projects: Pick<ProjectRepo, 'findById'>;
  templates: Pick<TemplateRepo, 'findById'>;
  inventories: Pick<InventoryRepo, 'findSummary'>;
  transaction: <T>(fn: (r: TxRepos) => Promise<T>) => Promise<T>;
  authz: Pick<Authorizer, 'requireAdmin'>;
  clock: Clock;
}

/** A stored policy as the API answers it (and as matchingPolicies takes it). */
export function policyView(row: PolicyRow): Policy {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    enabled: row.enabled === 1,
    // Stored only after PolicyMatch / PolicyApprovers validated them.
    match: row.match as PolicyMatch,
    approvers: row.approvers as PolicyApprovers,
    min_approvals: row.min_approvals,
    expires_after_s: row.expires_after_s,
    created_by: row.created_by,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/**
 * Policies are not grantable objects: they govern every run, so reading them is a matter of role, not of grants.
 * Operators may read them (to see why their run waits, and for whom); viewers may not.
 */
function requireReader(p: Principal): void {
  if (p.role === 'viewer') throw new ForbiddenError('approval policies are readable by operators and admins');
}

export function createPolicyService(deps: PolicyServiceDeps) {
  /** Each referenced id, where it sits in the body, and how to find it. */
  const references: Array<{
    field: string;
    kind: string;
    ids: (match: PolicyMatch | undefined, approvers: PolicyApprovers | undefined) => string[] | undefined;
    exists: (id: string) => Promise<unknown>;
  }> = [
    { field: 'match.projects', kind: 'project', ids: (m) => m?.projects, exists: (id) => deps.projects.findById(id) },
    {
      field: 'match.templates',
      kind: 'template',
      ids: (m) => m?.templates,
      exists: (id) => deps.templates.findById(id),
    },
    {
      field: 'match.inventories',
      kind: 'inventory',
      ids: (m) => m?.inventories,
      exists: (id) => deps.inventories.findSummary(id),
    },
    { field: 'approvers.users', kind: 'user', ids: (_, a) => a?.users, exists: (id) => deps.users.findById(id) },
    { field: 'approvers.teams', kind: 'team', ids: (_, a) => a?.teams, exists: (id) => deps.teams.findById(id) },
  ];

  /** A 422 naming every referenced id that does not exist, each at its place in the body. */
  async function requireReferencesExist(match?: PolicyMatch, approvers?: PolicyApprovers): Promise<void> {
    const errors: FieldError[] = [];
    for (const ref of references) {
      const ids = ref.ids(match, approvers) ?? [];
      const known = new Map<string, boolean>();
      for (const [i, id] of ids.entries()) {
        if (!known.has(id)) known.set(id, Boolean(await ref.exists(id)));
        if (!known.get(id)) errors.push({ path: `body.${ref.field}.${i}`, message: `no ${ref.kind} ${id}` });
      }
    }
    if (errors.length)
      throw new UnprocessableError(
        `the policy names what does not exist: ${errors.map((e) => e.message).join(', ')}`,
        errors,
      );
  }

  async function existing(id: string): Promise<PolicyRow> {
    const row = await deps.policies.findById(id);
    if (!row) throw notFound('policy', id);
    return row;
  }

  async function uniqueName<T>(name: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      if (err instanceof DuplicateKeyError) throw new ConflictError(`a policy named ${name} already exists`);
      throw err;
    }
  }

  return {
    async create(p: Principal, body: PolicyCreateBody): Promise<Policy> {
      deps.authz.requireAdmin(p);
      await requireReferencesExist(body.match, body.approvers);
      const now = deps.clock();
      const at = iso(now);
      const row: PolicyRow = {
        id: newId('pol', now.getTime()),
        name: body.name,
        description: body.description ?? null,
        enabled: body.enabled ? 1 : 0,
        match: body.match,
        approvers: body.approvers,
        min_approvals: body.min_approvals,
        expires_after_s: body.expires_after_s ?? null,
        created_by: p.id,
        created_at: at,
        updated_at: at,
      };
      await uniqueName(body.name, () =>
        deps.transaction(async (r) => {
          await r.policies.insert(row);
          await recordAudit(
            r.audit,
            {
              actor: p.id,
              action: 'policy.create',
              object: row.id,
              summary: `created approval policy ${row.name} (${body.enabled ? 'enabled' : 'disabled'}, ${row.min_approvals} approval${row.min_approvals === 1 ? '' : 's'})`,
            },
            deps.clock,
          );
        }),
      );
      return policyView(row);
    },

    /** Every policy, newest first (operators and admins). */
    async list(p: Principal, page: PageQuery & { cursor?: string | undefined }): Promise<Page<Policy>> {
      requireReader(p);
      const rows = await deps.policies.list({ limit: page.limit + 1, before: decodeCursor(page.cursor) });
      const result = toPage(rows, page.limit, (r) => r.id);
      return { items: result.items.map(policyView), next: result.next };
    },

    async get(p: Principal, id: string): Promise<Policy> {
      requireReader(p);
      return policyView(await existing(id));
    },

    /** What is given replaces the stored value; `description` or `expires_after_s` null removes it. */
    async update(p: Principal, id: string, body: PolicyUpdateBody): Promise<Policy> {
      deps.authz.requireAdmin(p);
      const row = await existing(id);
      await requireReferencesExist(body.match, body.approvers);
      const patch: PolicyPatch = { updated_at: iso(deps.clock()) };
      if (body.name !== undefined) patch.name = body.name;
      if (body.description !== undefined) patch.description = body.description;
      if (body.enabled !== undefined) patch.enabled = body.enabled ? 1 : 0;
      if (body.match !== undefined) patch.match = body.match;
      if (body.approvers !== undefined) patch.approvers = body.approvers;
      if (body.min_approvals !== undefined) patch.min_approvals = body.min_approvals;
      if (body.expires_after_s !== undefined) patch.expires_after_s = body.expires_after_s;
      const changed = Object.keys(body).filter(
        (k) => JSON.stringify(patch[k as keyof PolicyPatch]) !== JSON.stringify(row[k as keyof PolicyRow]),
      );
      const name = patch.name ?? row.name;
      const renamed = name !== row.name ? ` (was ${row.name})` : '';
      await uniqueName(name, () =>
        deps.transaction(async (r) => {
          if (!(await r.policies.update(id, patch))) throw notFound('policy', id);
          await recordAudit(
            r.audit,
            {
              actor: p.id,
              action: 'policy.update',
              object: id,
              summary: `updated approval policy ${name}${renamed}: ${changed.length ? `changed ${changed.sort().join(', ')}` : 'no field changed'}`,
            },
            deps.clock,
          );
        }),
      );
      return policyView({ ...row, ...patch });
    },

    /** Runs it holds stay held: each keeps the policy as it was when held. */
    async remove(p: Principal, id: string): Promise<void> {
      deps.authz.requireAdmin(p);
      const row = await existing(id);
      await deps.transaction(async (r) => {
        if (!(await r.policies.delete(id))) throw notFound('policy', id);
        await recordAudit(
          r.audit,
          { actor: p.id, action: 'policy.delete', object: id, summary: `deleted approval policy ${row.name}` },
          deps.clock,
        );
      });
    },
  };
}
export type PolicyService = ReturnType<typeof createPolicyService>;
