// Which approval policies hold a run, and who a policy names as an approver. Pure: the caller gathers the facts.
import type { PolicyApprovers, PolicyMatch, Role, RunOrigin } from '@baton/contracts';
import { compileGlobs, matchesAnyGlob } from '../common/glob.js';

/** What a policy's match is checked against: one submission as it will run. */
export interface RunFacts {
  projectId: string | null;
  templateId: string | null;
  inventoryId: string | null;
  /** the playbook's path in its project, or INLINE_PLAYBOOK_LABEL (runs/run.view.ts) for an inline playbook */
  playbook: string;
  check: boolean;
  origin: RunOrigin;
  submitterRole: Role;
  /** the worker labels the run asks for */
  labels: string[];
  /**
   * The host names the run targets, after its limit. Lazy: computing them may run ansible-inventory, so it is
   * called at most once per evaluation, and only when a policy with host globs holds on every other field.
   */
  hosts: () => Promise<string[]>;
}

const holds = <T>(wanted: readonly T[] | undefined, actual: T | null): boolean =>
  wanted === undefined || (actual !== null && wanted.includes(actual));

/** Every field of `match` but `hosts` holds for these facts. */
function holdsWithoutHosts(match: PolicyMatch, facts: RunFacts): boolean {
  return (
    holds(match.projects, facts.projectId) &&
    holds(match.templates, facts.templateId) &&
    holds(match.inventories, facts.inventoryId) &&
    holds(match.origins, facts.origin) &&
    holds(match.submitted_by_roles, facts.submitterRole) &&
    (match.check === undefined || match.check === facts.check) &&
    (match.labels === undefined || match.labels.some((l) => facts.labels.includes(l))) &&
    (match.playbooks === undefined || matchesAnyGlob(facts.playbook, match.playbooks))
  );
}

/**
 * The enabled policies whose match holds for the run, in the order given. Every given field of a match must hold (a
 * list holds when any of its items does), so an empty match holds for every run; disabled policies never match.
 * A rejection of `facts.hosts()` is passed on: the run's hosts cannot be known, so neither can the verdict.
 */
export async function matchingPolicies<P extends { enabled: boolean; match: PolicyMatch }>(
  policies: P[],
  facts: RunFacts,
): Promise<P[]> {
  let hosts: Promise<string[]> | undefined;
  const targetHosts = () => (hosts ??= facts.hosts());
  const matched: P[] = [];
  for (const policy of policies) {
    if (!policy.enabled || !holdsWithoutHosts(policy.match, facts)) continue;
    const globs = policy.match.hosts;
    if (globs !== undefined && !(await targetHosts()).some(compileGlobs(globs))) continue;
    matched.push(policy);
  }
  return matched;
}

/** Who is deciding: a user, their role now, and the teams they belong to. */
export interface ApproverCandidate {
  id: string;
  role: Role;
  teamIds: readonly string[];
}

/**
 * Whether the approvers name this person: listed as a user, holding a listed role, or a member of a listed team.
 * Admins may decide on any held run, but that is the caller's rule: here an admin counts only where named.
 */
export function approverMatches(approvers: PolicyApprovers, who: ApproverCandidate): boolean {
  return (
    (approvers.users?.includes(who.id) ?? false) ||
    (approvers.roles?.includes(who.role) ?? false) ||
    (approvers.teams?.some((t) => who.teamIds.includes(t)) ?? false)
  );
}
