import type {
  HostCounts,
  HostOutcomeSummary,
  Run,
  RunApproval,
  RunDecision,
  RunConclusion,
  RunIf,
  RunKind,
  RunOrigin,
  RunStatus,
} from '@baton/contracts';
import type { RunApprovalRow, RunHostRow, RunRow } from '@baton/db';

/** What the Run response says for an inline playbook instead of echoing its content. */
export const INLINE_PLAYBOOK_LABEL = '(inline)';

export type HostOutcome = 'unreachable' | 'failed' | 'changed' | 'ok';

/** A host's one-word outcome: unreachable beats failed beats changed beats ok. */
export function hostOutcome(c: HostCounts): HostOutcome {
  if (c.unreachable > 0) return 'unreachable';
  if (c.failed > 0) return 'failed';
  if (c.changed > 0) return 'changed';
  return 'ok';
}

export function summarizeHosts(stats: Record<string, HostCounts>): HostOutcomeSummary {
  const summary: HostOutcomeSummary = { total: 0, ok: 0, changed: 0, failed: 0, unreachable: 0 };
  for (const counts of Object.values(stats)) {
    summary.total += 1;
    summary[hostOutcome(counts)] += 1;
  }
  return summary;
}

export function toRunHostRows(runId: string, stats: Record<string, HostCounts>): RunHostRow[] {
  return Object.entries(stats).map(([host, c]) => ({
    run_id: runId,
    host,
    outcome: hostOutcome(c),
    ok: c.ok,
    changed: c.changed,
    failed: c.failed,
    unreachable: c.unreachable,
    skipped: c.skipped,
    rescued: c.rescued,
    ignored: c.ignored,
  }));
}

/** The approvals that count toward `policyId`. */
export const approvalsFor = (policyId: string, approvals: readonly RunApprovalRow[]): number =>
  approvals.filter((a) => a.decision === 'approve' && a.counts_for.includes(policyId)).length;

/**
 * The API shape of a run. `withHostStats` adds the per-host counts (GET of one run); `approvals` are its decisions
 * (none when not given: a run just created has none).
 */
export function toRunView(
  row: RunRow,
  opts: { withHostStats?: boolean; approvals?: readonly RunApprovalRow[] } = {},
): Run {
  const stats = row.stats;
  const approvals = (opts.approvals ?? []).filter((a) => a.run_id === row.id);
  return {
    id: row.id,
    kind: row.kind as RunKind,
    parent_id: row.parent_id,
    shard_index: row.shard_index,
    shard_count: row.shard_count,
    retry_of: row.retry_of,
    status: row.status as RunStatus,
    conclusion: row.conclusion as RunConclusion | null,
    reason: row.reason,
    playbook: row.playbook_source === 'inline' ? INLINE_PLAYBOOK_LABEL : row.playbook,
    project_id: row.project_id,
    commit: row.git_commit,
    ref: row.git_ref,
    origin: row.origin as RunOrigin,
    template_id: row.template_id,
    schedule_id: row.schedule_id,
    trigger_id: row.trigger_id,
    step_index: row.step_index,
    step_name: row.step_name,
    run_if: row.run_if as RunIf | null,
    survey_answers: row.survey_answers,
    inventory_id: row.inventory_id,
    limit: row.host_limit,
    hosts: row.hosts,
    extra_vars: row.extra_vars,
    credential_ids: row.credential_ids,
    check: row.check_mode === 1,
    forks: row.forks,
    verbosity: row.verbosity,
    timeout_s: row.timeout_s,
    labels: row.labels,
    submitted_by: row.submitted_by,
    worker: row.worker,
    exit_code: row.exit_code,
    host_summary: stats ? summarizeHosts(stats) : null,
    ...(opts.withHostStats ? { host_stats: stats } : {}),
    last_seq: row.last_seq,
    log_lines: row.log_lines,
    output_truncated: row.output_truncated === 1,
    output_pruned_at: row.output_pruned_at,
    created_at: row.created_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
    cancel_requested_at: row.cancel_requested_at,
    held_by: row.held_by,
    hold_expires_at: row.hold_expires_at,
    approvals_needed:
      row.hold_policies?.map((pol) => ({
        policy_id: pol.id,
        name: pol.name,
        min_approvals: pol.min_approvals,
        approved: approvalsFor(pol.id, approvals),
      })) ?? null,
    approvals: approvals.map((a): RunApproval => ({
      user_id: a.user_id,
      username: a.username,
      decision: a.decision as RunDecision,
      comment: a.comment,
      at: a.at,
    })),
  };
}
