// The access matrix's expectations, as data: one row per operation on an object, naming what it needs, and ONE
// function that turns a need, a caller's role and the grant level the caller holds into the answer. It restates
// packages/core/src/authz/authorize.ts (and the few objects with a visibility rule of their own: runs, grants,
// tokens) independently of the code, so the matrix compares the rule as written with the rule as served.
import type { GrantLevel, Role } from '@baton/contracts';

/**
 * What an operation needs:
 * - `use`: any grant on the object (rule 4; `manage` implies `use`), whatever the role; none: 404 (rule 5)
 * - `manage`: a `manage` grant and a role that may change things (rules 2 and 4); none at all: 404
 * - `use+create`: any grant, and a role that may create (an action that starts work: sync, refresh, launch)
 * - `anyone`: every signed-in user (teams and users are listable, rule 5)
 * - `operator`: operators and admins, no grant involved (policies govern every run, so reading them is a matter of role)
 * - `admin`: admins only (rule 1); a refusal is 403, never 404, for objects everyone may list
 * - `grant-see` / `grant-delete`: a grant is visible to its subject and to managers of its object; revoking it needs
 *   a role that may change things and `manage` on its object
 * - `self`: the caller's own personal token (admins: anyone's); another's is the 404 of an unknown id
 * - `run-see`: the submitter, or any grant on the run's project, template or inventory
 * - `run-act`: cancel and retry: a role that may create and `use` on everything the run references
 */
export type Need =
  | 'use'
  | 'manage'
  | 'use+create'
  | 'anyone'
  | 'operator'
  | 'admin'
  | 'grant-see'
  | 'grant-delete'
  | 'self'
  | 'run-see'
  | 'run-act';

export type Kind =
  | 'credential'
  | 'project'
  | 'inventory'
  | 'inventory source'
  | 'template'
  | 'schedule'
  | 'trigger'
  | 'notifier'
  | 'team'
  | 'grant'
  | 'token'
  | 'user'
  | 'policy'
  | 'run'
  | 'pipeline'
  | 'inventory known hosts'
  | 'project known hosts';

export interface Rule {
  kind: Kind;
  /** the operationId in /v1/openapi.json */
  operation: string;
  needs: Need;
  /** a delete: each caller gets an object of its own, so one caller's success does not change the next one's answer */
  destroys?: boolean;
}

/** Every read, change, delete and action on a stored object, by kind. Lists are checked apart (membership). */
export const RULES: Rule[] = [
  ...crud('credential', 'Credential'),
  ...crud('project', 'Project'),
  { kind: 'project', operation: 'syncProject', needs: 'use+create' },
  ...crud('inventory', 'Inventory'),
  { kind: 'inventory', operation: 'listInventoryHosts', needs: 'use' },
  ...crud('inventory source', 'InventorySource'),
  { kind: 'inventory source', operation: 'refreshInventorySource', needs: 'use+create' },
  ...crud('template', 'Template'),
  { kind: 'template', operation: 'launchTemplate', needs: 'use+create' },
  ...crud('schedule', 'Schedule'),
  ...crud('trigger', 'Trigger'),
  { kind: 'trigger', operation: 'rotateTriggerSecret', needs: 'manage' },
  ...crud('notifier', 'Notifier'),
  { kind: 'notifier', operation: 'testNotifier', needs: 'manage' },
  { kind: 'notifier', operation: 'rotateNotifierSecret', needs: 'manage' },
  { kind: 'notifier', operation: 'listNotifierDeliveries', needs: 'use' },
  ...knownHosts('inventory known hosts', 'Inventory'),
  ...knownHosts('project known hosts', 'Project'),
  { kind: 'team', operation: 'getTeam', needs: 'anyone' },
  { kind: 'team', operation: 'listTeamMembers', needs: 'anyone' },
  { kind: 'team', operation: 'addTeamMember', needs: 'manage' },
  { kind: 'team', operation: 'removeTeamMember', needs: 'manage' },
  { kind: 'team', operation: 'deleteTeam', needs: 'manage', destroys: true },
  { kind: 'grant', operation: 'getGrant', needs: 'grant-see' },
  { kind: 'grant', operation: 'deleteGrant', needs: 'grant-delete', destroys: true },
  { kind: 'token', operation: 'getToken', needs: 'self' },
  { kind: 'token', operation: 'revokeToken', needs: 'self', destroys: true },
  { kind: 'user', operation: 'getUser', needs: 'anyone' },
  { kind: 'user', operation: 'updateUser', needs: 'admin' },
  { kind: 'user', operation: 'deleteUser', needs: 'admin', destroys: true },
  { kind: 'policy', operation: 'getPolicy', needs: 'operator' },
  { kind: 'policy', operation: 'updatePolicy', needs: 'admin' },
  { kind: 'policy', operation: 'deletePolicy', needs: 'admin', destroys: true },
  ...runReads('run'),
  { kind: 'run', operation: 'cancelRun', needs: 'run-act' },
  { kind: 'run', operation: 'retryRun', needs: 'run-act' },
  ...runReads('pipeline'),
  { kind: 'pipeline', operation: 'listRunSteps', needs: 'run-see' },
  { kind: 'pipeline', operation: 'cancelRun', needs: 'run-act' },
];

function crud(kind: Kind, name: string): Rule[] {
  return [
    { kind, operation: `get${name}`, needs: 'use' },
    { kind, operation: `update${name}`, needs: 'manage' },
    { kind, operation: `delete${name}`, needs: 'manage', destroys: true },
  ];
}

function knownHosts(kind: Kind, name: 'Inventory' | 'Project'): Rule[] {
  return [
    { kind, operation: `list${name}KnownHosts`, needs: 'use' },
    { kind, operation: `replace${name}KnownHosts`, needs: 'manage' },
    { kind, operation: `pin${name}HostKey`, needs: 'manage' },
    { kind, operation: `forget${name}HostKey`, needs: 'manage' },
    { kind, operation: `forget${name}KnownHosts`, needs: 'manage' },
  ];
}

function runReads(kind: Kind): Rule[] {
  return ['getRun', 'listRunShards', 'getRunLog', 'listRunEvents', 'streamRunEvents', 'listRunDrift'].map(
    (operation) => ({ kind, operation, needs: 'run-see' as const }),
  );
}

/** What a caller holds for one check: its role, its own id and the grant levels that matter to the rule. */
export interface Standing {
  role: Role;
  /** the strongest grant on the object (for runs: on any object the run references), own or through a team */
  level: GrantLevel | null;
  /** the caller is the grant's subject, the token's owner or the run's submitter */
  self: boolean;
  /** for `run-act`: `use` at least on every object the run references */
  usesAll?: boolean;
}

/** The expected answer: `ok` (anything but a refusal: 2xx, or a 4xx about the state or the input), 403 or 404. */
export type Expected = 'ok' | 403 | 404;

/** Kinds every signed-in user may list (rule 5): where the rule would hide one with 404, it refuses with 403. */
export const LISTABLE: ReadonlySet<Kind> = new Set(['team', 'user']);

/** THE rule, restated: mirrors packages/core/src/authz/authorize.ts and the visibility rules of runs, grants, tokens. */
export function expectedAnswer(rule: Pick<Rule, 'kind' | 'needs'>, s: Standing): Expected {
  const answer = unlisted(rule.needs, s);
  return answer === 404 && LISTABLE.has(rule.kind) ? 403 : answer;
}

function unlisted(needs: Need, s: Standing): Expected {
  if (s.role === 'admin') return 'ok';
  const changer = s.role !== 'viewer';
  switch (needs) {
    case 'use':
      return s.level ? 'ok' : 404;
    case 'manage':
      if (!s.level) return 404;
      return changer && s.level === 'manage' ? 'ok' : 403;
    case 'use+create':
      if (!s.level) return 404;
      return changer ? 'ok' : 403;
    case 'anyone':
      return 'ok';
    case 'operator':
      return changer ? 'ok' : 403;
    case 'admin':
      return 403;
    case 'grant-see':
      return s.self || s.level === 'manage' ? 'ok' : 404;
    case 'grant-delete':
      if (!changer) return 403;
      if (!s.self && s.level !== 'manage') return 404;
      return s.level === 'manage' ? 'ok' : 403;
    case 'self':
      return s.self ? 'ok' : 404;
    case 'run-see':
      return s.self || s.level ? 'ok' : 404;
    case 'run-act':
      if (!s.self && !s.level) return 404;
      if (!changer) return 403;
      return s.usesAll ? 'ok' : 403;
  }
}
