// Reconcile's spec, with fakes for its narrowed dependencies: what it submits, under which origin, with which secrets.
import { describe, expect, it } from '@jest/globals';
import type { Run, SubmitRunBody } from '@baton/contracts';
import type { DriftItemRow } from '@baton/db';
import { testRunRow } from '@baton/db/testing';
import type { Principal } from '../authz/authorize.js';
import { ConflictError, ForbiddenError } from '../common/errors.js';
import type { LaunchContext } from '../runs/run-launch.js';
import { createDriftService } from './drift.service.js';

const operator: Principal = { id: 'usr_01ARZ3NDEKTSV4RRFFQ69G5FA1', username: 'op', role: 'operator' };
const DRY = 'run_01ARZ3NDEKTSV4RRFFQ69G5FA2';
const dryRun = testRunRow(DRY, {
  status: 'finished',
  playbook_source: 'project',
  playbook: 'site.yml',
  project_id: 'prj_01ARZ3NDEKTSV4RRFFQ69G5FA3',
  git_commit: 'c'.repeat(40),
  inventory_id: 'inv_01ARZ3NDEKTSV4RRFFQ69G5FA4',
  inventory_content: null,
  credential_ids: ['cred_01ARZ3NDEKTSV4RRFFQ69G5FA5'],
  extra_vars: { env: 'prod', db_password: '$encrypted$' },
  secret_vars_enc: 'sealed-answers',
  check_mode: 1,
  forks: 7,
  labels: ['dc-1'],
});

const drift = (id: string, scope: string, over: Partial<DriftItemRow> = {}): DriftItemRow => ({
  id,
  scope,
  host: 'web-1',
  resource: 'site.yml:4',
  state: 'open',
  playbook: 'site.yml',
  project_id: dryRun.project_id,
  inventory_id: dryRun.inventory_id,
  template_id: null,
  submitted_by: operator.id,
  git_commit: dryRun.git_commit,
  task: 'config',
  task_path: 'site.yml:4',
  item: null,
  action: 'ansible.builtin.copy',
  diff: '{"before":"a","after":"b"}',
  no_log: 0,
  found_in_run_id: DRY,
  found_at: '2026-11-26T10:00:00.000Z',
  reconcile_run_id: null,
  resolved_by_run_id: null,
  resolved_at: null,
  fixed: null,
  ...over,
});

function service(open: DriftItemRow[], opts: { forbid?: boolean } = {}) {
  const submitted: Array<{ body: SubmitRunBody; ctx: LaunchContext }> = [];
  const marked: Array<{ ids: readonly string[]; runId: string }> = [];
  const svc = createDriftService({
    observation: {
      list: async () => [],
      unassessed: async () => [],
      openOfHost: async () => open,
      byReconcileRun: async () => [],
      markReconcile: async () => {},
    },
    access: { visibility: async () => 'all', visibleRun: async () => dryRun },
    authz: {
      requireCreator: () => {
        if (opts.forbid) throw new ForbiddenError('viewers cannot start runs');
      },
    },
    openSecrets: (sealed): Record<string, string> => (sealed === 'sealed-answers' ? { db_password: 'hunter2' } : {}),
    submit: async (_p, body, ctx) => {
      submitted.push({ body, ctx });
      return { id: 'run_01ARZ3NDEKTSV4RRFFQ69G5FA9', status: 'held' } as Run;
    },
    transaction: (fn) => fn({ observation: { markReconcile: async (ids, runId) => void marked.push({ ids, runId }) } }),
  });
  return { svc, submitted, marked };
}

describe('drift reconcile', () => {
  it('submits the dry run’s playbook, commit, inventory, credentials and variables on the host, for real, with its secrets', async () => {
    const { svc, submitted, marked } = service([drift('drf_1', 's'), drift('drf_2', 's', { resource: 'x' })]);
    const result = await svc.reconcile(operator, { host: 'web-1' });
    expect(submitted).toHaveLength(1);
    expect(submitted[0]!.body).toEqual({
      playbook: 'site.yml',
      project_id: dryRun.project_id,
      ref: dryRun.git_commit,
      inventory_id: dryRun.inventory_id,
      limit: 'web-1',
      extra_vars: { env: 'prod', db_password: '$encrypted$' },
      credential_ids: dryRun.credential_ids,
      check: false,
      forks: 7,
      labels: ['dc-1'],
    });
    expect(submitted[0]!.ctx).toEqual({ origin: 'reconcile', secretVars: { db_password: 'hunter2' } });
    expect(marked).toEqual([{ ids: ['drf_1', 'drf_2'], runId: 'run_01ARZ3NDEKTSV4RRFFQ69G5FA9' }]);
    expect(result.resources.map((d) => d.reconcile_run_id)).toEqual([
      'run_01ARZ3NDEKTSV4RRFFQ69G5FA9',
      'run_01ARZ3NDEKTSV4RRFFQ69G5FA9',
    ]);
  });

  it('refuses viewers before anything, a host without drift, and drift under several scopes', async () => {
    const viewer = service([drift('drf_1', 's')], { forbid: true });
    await expect(viewer.svc.reconcile(operator, { host: 'web-1' })).rejects.toBeInstanceOf(ForbiddenError);
    expect(viewer.submitted).toEqual([]);
    await expect(service([]).svc.reconcile(operator, { host: 'web-1' })).rejects.toBeInstanceOf(ConflictError);
    const two = service([drift('drf_1', 'a'), drift('drf_2', 'b', { playbook: 'other.yml' })]);
    await expect(two.svc.reconcile(operator, { host: 'web-1' })).rejects.toThrow(/give playbook and inventory_id/);
    expect(two.submitted).toEqual([]);
  });

  it('never shows the diff of a no_log task, whatever is stored', async () => {
    const { svc } = service([drift('drf_1', 's', { no_log: 1, diff: '{"after":"secret"}' })]);
    const result = await svc.reconcile(operator, { host: 'web-1' });
    expect(result.resources[0]).toMatchObject({ no_log: true, diff: null });
  });
});
