// AWX organizations, users, teams and roles as Baton teams, users, memberships and grants. Roles sit under each
// user's and team's `related.roles`; `Member` of an organization or team is membership; organization-wide roles
// are spread over the objects of that organization this import plans.
import type { AwxRole, GrantLevel } from '@baton/contracts';
import type { PlannedGrant, PlannedPolicy } from '../import-plan.js';
import type { AwxContext } from './awx-context.js';
import { keyOf, keyOfObject } from './awx-keys.js';

const USE_ROLES = new Set(['Execute', 'Use', 'Read', 'Update', 'Approve', 'Ad Hoc', 'Member', 'Auditor']);
const MANAGE_ROLES = new Set(['Admin']);
/** Organization roles over one kind of the organization's objects (key prefixes), and the level they give. */
const ORG_ROLES: Record<string, { prefixes: string[]; level: GrantLevel }> = {
  Admin: {
    prefixes: [
      'credential',
      'project',
      'inventory',
      'inventory_source',
      'job_template',
      'workflow_job_template',
      'team',
    ],
    level: 'manage',
  },
  Read: {
    prefixes: ['credential', 'project', 'inventory', 'inventory_source', 'job_template', 'workflow_job_template'],
    level: 'use',
  },
  Auditor: {
    prefixes: ['credential', 'project', 'inventory', 'inventory_source', 'job_template', 'workflow_job_template'],
    level: 'use',
  },
  Execute: { prefixes: ['job_template', 'workflow_job_template'], level: 'use' },
  Approve: { prefixes: ['workflow_job_template'], level: 'use' },
  'Project Admin': { prefixes: ['project'], level: 'manage' },
  'Inventory Admin': { prefixes: ['inventory', 'inventory_source'], level: 'manage' },
  'Credential Admin': { prefixes: ['credential'], level: 'manage' },
  'Job Template Admin': { prefixes: ['job_template'], level: 'manage' },
  'Workflow Admin': { prefixes: ['workflow_job_template'], level: 'manage' },
};
const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]+$/;

export function planIdentity(ctx: AwxContext): void {
  for (const o of ctx.doc.organizations ?? []) {
    const key = keyOfObject(o, 'organization');
    if (key) ctx.add({ kind: 'team', key, name: ctx.names.claim('team', o.name) });
  }
  for (const u of ctx.doc.users ?? []) {
    const key = keyOfObject(u, 'user');
    if (!key) continue;
    const email = u.email && EMAIL.test(u.email) && u.email.length <= 254 ? u.email : undefined;
    if (u.email && !email)
      ctx.warn(`user ${u.username}: the email ${u.email} is not one Baton accepts; it was left out`);
    ctx.add({
      kind: 'user',
      key,
      name: u.username,
      role: u.is_superuser ? 'admin' : u.is_system_auditor ? 'viewer' : 'operator',
      ...(email ? { email } : {}),
    });
  }
  for (const t of ctx.doc.teams ?? []) {
    const key = keyOfObject(t, 'team');
    const org = t.organization && typeof t.organization.name === 'string' ? t.organization.name : undefined;
    if (key) ctx.add({ kind: 'team', key, name: ctx.names.claim('team', t.name, org) });
  }
  const holders: Array<{ subject: string; subjectName: string; role: AwxRole }> = [];
  for (const u of ctx.doc.users ?? []) {
    const key = keyOfObject(u, 'user');
    if (key) for (const role of u.related?.roles ?? []) holders.push({ subject: key, subjectName: u.username, role });
  }
  for (const t of ctx.doc.teams ?? []) {
    const key = keyOfObject(t, 'team');
    if (key)
      for (const role of t.related?.roles ?? []) holders.push({ subject: key, subjectName: `team ${t.name}`, role });
  }
  const members = new Map<string, Set<string>>();
  const nested: Array<[string, string]> = [];
  const approvers = new Map<string, { users: Set<string>; teams: Set<string> }>();
  const grant = (subject: string, object: string, level: GrantLevel, label: string) => {
    const key = `grant:${subject}->${object}`;
    const held = ctx.planned.get(key) as PlannedGrant | undefined;
    if (held) {
      if (level === 'manage') held.level = 'manage';
      return;
    }
    ctx.add({ kind: 'grant', key, name: label, subject, object, level });
  };
  const approver = (wf: string, subject: string) => {
    const a = approvers.get(wf) ?? { users: new Set(), teams: new Set() };
    approvers.set(wf, a);
    (subject.startsWith('user:') ? a.users : a.teams).add(subject);
  };

  for (const { subject, subjectName, role } of holders) {
    const label = `${role.name} of ${subjectName}`;
    const target = keyOf(role.content_object);
    if (!role.content_object || !target) {
      ctx.skip(
        'role',
        label,
        'a system-wide role is not imported: Baton users have a role of their own (admin, operator, viewer)',
      );
      continue;
    }
    const type = String(role.content_object.type);
    if (!ctx.planned.has(target) || !ctx.planned.has(subject)) {
      ctx.skip(
        'role',
        `${label} on ${role.content_object.name ?? target}`,
        `its ${ctx.planned.has(subject) ? type.replaceAll('_', ' ') : 'holder'} was not imported`,
      );
      continue;
    }
    const on = `${label} on ${String(role.content_object.name ?? '')}`;
    if (type === 'organization' || type === 'team') {
      if (role.name === 'Member') {
        if (subject.startsWith('team:')) nested.push([subject, target]);
        else members.set(target, (members.get(target) ?? new Set()).add(subject));
        continue;
      }
      if (type === 'team') {
        if (MANAGE_ROLES.has(role.name) || USE_ROLES.has(role.name))
          grant(subject, target, MANAGE_ROLES.has(role.name) ? 'manage' : 'use', on);
        else ctx.skip('role', on, `Baton has no ${role.name} role`);
        continue;
      }
      const spread = ORG_ROLES[role.name];
      if (!spread) {
        ctx.skip('role', on, `organization role ${role.name} has no Baton equivalent`);
        continue;
      }
      const org = target.slice('organization:'.length);
      if (role.name === 'Admin') grant(subject, target, 'manage', on);
      for (const o of ctx.objects) {
        const prefix = o.key.split(':')[0]!;
        if (!spread.prefixes.includes(prefix) || !o.key.slice(prefix.length + 1).startsWith(`${org}/`)) continue;
        if (o.key.includes('#')) continue; // a become credential follows its Machine credential below
        grant(subject, o.key, spread.level, `${on} (${o.name})`);
        if (ctx.planned.has(o.key + '#become'))
          grant(subject, o.key + '#become', spread.level, `${on} (${o.name} become)`);
        if (prefix === 'workflow_job_template' && ['Admin', 'Approve'].includes(role.name)) approver(o.key, subject);
      }
      continue;
    }
    if (!MANAGE_ROLES.has(role.name) && !USE_ROLES.has(role.name) && !role.name.endsWith(' Admin')) {
      ctx.skip('role', on, `Baton has no ${role.name} role`);
      continue;
    }
    const level: GrantLevel = MANAGE_ROLES.has(role.name) || role.name.endsWith(' Admin') ? 'manage' : 'use';
    grant(subject, target, level, on);
    if (ctx.planned.has(target + '#become')) grant(subject, target + '#become', level, `${on} become`);
    if (type === 'workflow_job_template' && ['Admin', 'Approve'].includes(role.name)) approver(target, subject);
  }

  // Baton teams do not nest: a team that is a Member of another lends its members to it.
  if (nested.length)
    ctx.warn(
      `teams inside teams were flattened: their members became members of the outer team (${nested.map(([a, b]) => `${ctx.planned.get(a)!.name} in ${ctx.planned.get(b)!.name}`).join(', ')})`,
    );
  for (let changed = true, rounds = 0; changed && rounds < nested.length + 1; rounds++) {
    changed = false;
    for (const [inner, outer] of nested) {
      const into = members.get(outer) ?? new Set<string>();
      for (const u of members.get(inner) ?? []) {
        if (into.has(u)) continue;
        into.add(u);
        changed = true;
      }
      members.set(outer, into);
    }
  }
  for (const [team, users] of members)
    for (const user of users)
      ctx.add({
        kind: 'membership',
        key: `membership:${team}<-${user}`,
        name: `${ctx.planned.get(user)!.name} in ${ctx.planned.get(team)!.name}`,
        team,
        user,
      });

  for (const o of ctx.objects) {
    if (o.kind !== 'policy') continue;
    const policy = o as PlannedPolicy;
    const a = approvers.get(policy.templates[0]!);
    if (a && (a.users.size || a.teams.size))
      policy.approvers = {
        ...(a.users.size ? { users: [...a.users] } : {}),
        ...(a.teams.size ? { teams: [...a.teams] } : {}),
      };
    else {
      policy.approvers = { roles: ['admin'] };
      ctx.warn(`approval policy ${policy.name}: nobody held Approve on the workflow in the export, so admins decide`);
    }
  }
}
