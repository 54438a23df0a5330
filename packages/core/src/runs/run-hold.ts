// Holding runs for approval (issue 12, "Approval policies"): at submit, after every check and before the rows are
// stored, the enabled policies are evaluated against each unit the submission runs (the run, or each pipeline step);
// a submission any policy matches is stored `held` as one unit (a split with its shards, a pipeline with its steps)
// and enqueued only once approved. Runs of some origins are always held.
import type { PolicyApprovers, PolicyMatch, Role, RunOrigin } from '@baton/contracts';
import type { HeldPolicy, RunRow } from '@baton/db';
import type { Principal } from '../authz/authorize.js';
import { iso } from '../common/clock.js';
import { approverMatches, matchingPolicies, type RunFacts } from '../policies/policy-match.js';
import { INLINE_PLAYBOOK_LABEL } from './run.view.js';

/** Runs proposed by the AI helpers and by drift reconcile wait for approval whether or not a policy matches them. */
export const ALWAYS_HELD_ORIGINS: readonly string[] = ['ai', 'reconcile'] satisfies RunOrigin[];

/** An enabled policy as evaluation needs it. */
export interface EnabledPolicy extends HeldPolicy {
  match: PolicyMatch;
}

/** One unit a submission runs: its row and the hosts it targets (asked for only when a policy has host globs). */
export interface HoldUnit {
  row: RunRow;
  hosts: () => Promise<string[]>;
}

export type Hold = Pick<RunRow, 'held_by' | 'hold_policies' | 'hold_expires_at'>;

function factsOf(p: Principal, unit: HoldUnit): RunFacts {
  const row = unit.row;
  return {
    projectId: row.project_id,
    templateId: row.template_id,
    inventoryId: row.inventory_id,
    playbook: row.playbook_source === 'inline' ? INLINE_PLAYBOOK_LABEL : row.playbook,
    check: row.check_mode === 1,
    origin: row.origin as RunOrigin,
    submitterRole: p.role,
    labels: row.labels,
    hosts: unit.hosts,
  };
}

export function createRunHolder(deps: { policies: { listEnabled(): Promise<EnabledPolicy[]> } }) {
  return {
    /**
     * The hold of a submission by `p` (units: the run, or each step of a pipeline), or null when it runs at once.
     * Each policy is snapshotted as it is now: later edits of a policy never change what a held run waits for.
     */
    async holdFor(p: Principal, units: HoldUnit[], at: Date): Promise<Hold | null> {
      const enabled = await deps.policies.listEnabled();
      const matched = new Map<string, EnabledPolicy>();
      for (const unit of units) {
        const open = enabled.filter((pol) => !matched.has(pol.id)).map((pol) => ({ ...pol, enabled: true }));
        if (open.length === 0) break;
        for (const pol of await matchingPolicies(open, factsOf(p, unit))) matched.set(pol.id, pol);
      }
      const origin = units[0]?.row.origin ?? 'api';
      if (matched.size === 0 && !ALWAYS_HELD_ORIGINS.includes(origin)) return null;
      const policies: HeldPolicy[] = [...matched.values()]
        .sort((a, b) => (a.id < b.id ? -1 : 1))
        .map(({ id, name, approvers, min_approvals, expires_after_s }) => ({
          id,
          name,
          approvers,
          min_approvals,
          expires_after_s,
        }));
      const expiries = policies.flatMap((pol) =>
        pol.expires_after_s === null ? [] : [at.getTime() + pol.expires_after_s * 1000],
      );
      return {
        held_by: policies.map((pol) => pol.id),
        hold_policies: policies,
        hold_expires_at: expiries.length ? iso(new Date(Math.min(...expiries))) : null,
      };
    },
  };
}
export type RunHolder = ReturnType<typeof createRunHolder>;

/** The words an audit summary adds for a held submission. */
export function holdWords(hold: Hold, origin: string): string {
  const by = hold.held_by ?? [];
  return `; held for approval${by.length ? ` by ${by.join(', ')}` : ` (origin ${origin})`}`;
}

/**
 * `rows` (a run, a split and its shards, or a pipeline and its steps, parent first) as a held unit: the parent `held`
 * with the hold; a split's shards `held` with it (a pipeline's steps are `waiting` already).
 */
export function heldRows(rows: RunRow[], hold: Hold): RunRow[] {
  const [parent, ...children] = rows;
  return [
    { ...parent!, ...hold, status: 'held' },
    ...children.map((c) => (c.kind === 'shard' && c.status === 'pending' ? { ...c, status: 'held' } : c)),
  ];
}

/** Who may decide on a held run, and which of its policies their approval counts toward. */
export function decisionRights(
  who: { id: string; role: Role; teamIds: readonly string[] },
  policies: readonly HeldPolicy[],
): { mayDecide: boolean; countsFor: string[] } {
  if (who.role === 'admin') return { mayDecide: true, countsFor: policies.map((pol) => pol.id) };
  const countsFor = policies
    .filter((pol) => approverMatches(pol.approvers as PolicyApprovers, who))
    .map((pol) => pol.id);
  return { mayDecide: countsFor.length > 0, countsFor };
}
