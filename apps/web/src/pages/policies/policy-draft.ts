// The policy form's state and the request body it becomes (empty lists are left out: the API wants at least one
// item in a list that is given).
import type { Policy, PolicyApprovers, PolicyMatch, Role, RunOrigin } from '@baton/contracts';

export const ORIGINS: readonly RunOrigin[] = ['api', 'template', 'schedule', 'trigger', 'ai', 'reconcile', 'import'];
export const ROLES: readonly Role[] = ['viewer', 'operator', 'admin'];

export const EXPIRY_UNITS = { minutes: 60, hours: 3600, days: 86_400 } as const;
export type ExpiryUnit = keyof typeof EXPIRY_UNITS;

export interface PolicyDraft {
  name: string;
  description: string;
  enabled: boolean;
  projects: string[];
  templates: string[];
  inventories: string[];
  /** one glob a line */
  playbooks: string;
  hosts: string;
  check: 'any' | 'true' | 'false';
  origins: RunOrigin[];
  submittedByRoles: Role[];
  /** separated by spaces or commas */
  labels: string;
  approverRoles: Role[];
  approverUsers: string[];
  approverTeams: string[];
  minApprovals: string;
  /** empty: held runs never expire */
  expiry: string;
  expiryUnit: ExpiryUnit;
}

export const emptyDraft: PolicyDraft = {
  name: '',
  description: '',
  enabled: true,
  projects: [],
  templates: [],
  inventories: [],
  playbooks: '',
  hosts: '',
  check: 'any',
  origins: [],
  submittedByRoles: [],
  labels: '',
  approverRoles: [],
  approverUsers: [],
  approverTeams: [],
  minApprovals: '1',
  expiry: '',
  expiryUnit: 'hours',
};

export function draftOf(p: Policy): PolicyDraft {
  const m = p.match;
  const unit = (['days', 'hours', 'minutes'] as const).find(
    (u) => p.expires_after_s !== null && p.expires_after_s % EXPIRY_UNITS[u] === 0,
  );
  return {
    name: p.name,
    description: p.description ?? '',
    enabled: p.enabled,
    projects: m.projects ?? [],
    templates: m.templates ?? [],
    inventories: m.inventories ?? [],
    playbooks: (m.playbooks ?? []).join('\n'),
    hosts: (m.hosts ?? []).join('\n'),
    check: m.check === undefined ? 'any' : m.check ? 'true' : 'false',
    origins: m.origins ?? [],
    submittedByRoles: m.submitted_by_roles ?? [],
    labels: (m.labels ?? []).join(' '),
    approverRoles: p.approvers.roles ?? [],
    approverUsers: p.approvers.users ?? [],
    approverTeams: p.approvers.teams ?? [],
    minApprovals: String(p.min_approvals),
    expiry: p.expires_after_s === null ? '' : String(p.expires_after_s / EXPIRY_UNITS[unit ?? 'minutes']),
    expiryUnit: p.expires_after_s === null ? 'hours' : (unit ?? 'minutes'),
  };
}

const lines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
const some = <T>(list: T[]) => (list.length ? list : undefined);
/** A whole number when the text is one; otherwise the text itself, for the API to name what is wrong. */
const numberOr = (text: string): number | string => (/^\s*-?\d+\s*$/.test(text) ? Number(text) : text);

export interface PolicyBody {
  name: string;
  description?: string | null;
  enabled: boolean;
  match: PolicyMatch;
  approvers: PolicyApprovers;
  min_approvals: number | string;
  expires_after_s?: number | string | null;
}

/** The body of POST (create: absent fields take defaults) or PUT (update: clearing means null). */
export function bodyOf(d: PolicyDraft, mode: 'create' | 'update'): PolicyBody {
  const match: Record<string, unknown> = {
    projects: some(d.projects),
    templates: some(d.templates),
    inventories: some(d.inventories),
    playbooks: some(lines(d.playbooks)),
    hosts: some(lines(d.hosts)),
    check: d.check === 'any' ? undefined : d.check === 'true',
    origins: some(d.origins),
    submitted_by_roles: some(d.submittedByRoles),
    labels: some(d.labels.split(/[\s,]+/).filter(Boolean)),
  };
  const approvers: Record<string, unknown> = {
    roles: some(d.approverRoles),
    users: some(d.approverUsers),
    teams: some(d.approverTeams),
  };
  const expiry = d.expiry.trim();
  const expirySeconds = (() => {
    const n = numberOr(expiry);
    return typeof n === 'number' ? n * EXPIRY_UNITS[d.expiryUnit] : n;
  })();
  const description = d.description.trim();
  return {
    name: d.name,
    ...(description ? { description } : mode === 'update' ? { description: null } : {}),
    enabled: d.enabled,
    match: withoutUndefined(match) as PolicyMatch,
    approvers: withoutUndefined(approvers) as PolicyApprovers,
    min_approvals: numberOr(d.minApprovals),
    ...(expiry ? { expires_after_s: expirySeconds } : mode === 'update' ? { expires_after_s: null } : {}),
  };
}

function withoutUndefined(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}
