// The AWX mapper on the shared export, the lead's own fixture (workflows, roles, schedules, surveys) and the hostile
// documents: what each AWX object becomes in the plan, and that junk is a problem at a path, never an exception.
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import type { ImportPlan, PlannedObject, PlannedPolicy, PlannedSchedule, PlannedTemplate } from '../import-plan.js';
import { mapAwxExport } from './awx-map.js';

const FIXTURES = new URL('../../../../../test/fixtures/import/', import.meta.url);
const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8'));
const NOW = new Date('2026-11-26T00:00:00Z');
const map = mapAwxExport(NOW);

function planOf(doc: unknown): ImportPlan {
  const r = map(doc);
  if (!r.ok) throw new Error(`expected a plan, got ${JSON.stringify(r.problem)}`);
  return r.plan;
}
const find = <K extends PlannedObject['kind']>(plan: ImportPlan, kind: K, name: string) =>
  plan.objects.find((o) => o.kind === kind && o.name === name) as Extract<PlannedObject, { kind: K }> | undefined;

describe('the lead fixture: workflows, roles, schedules and surveys', () => {
  const plan = planOf(fixture('awx-workflow-and-roles.json'));

  it('turns the release train into build, deploy, smoke (always) and rollback (failure), holding it for approval', () => {
    const train = find(plan, 'template', 'release-train') as PlannedTemplate;
    expect(train.template_kind).toBe('pipeline');
    const steps = train.spec.steps as Array<{ name: string; run_if?: string }>;
    expect(steps.map((s) => [s.name, s.run_if])).toEqual([
      ['build', undefined],
      ['deploy', undefined],
      ['smoke', 'always'],
      ['rollback', 'failure'],
    ]);
    const policy = find(plan, 'policy', 'release-train approval') as PlannedPolicy;
    expect(policy).toMatchObject({
      templates: [train.key],
      approvers: { users: ['user:mkowalski'], teams: ['team:Acme Platform/release-managers'] },
      expires_after_s: 7200,
    });
  });

  it('skips the workflow whose export lost its edges, saying why', () => {
    expect(plan.skipped).toContainEqual({
      kind: 'workflow_job_template',
      name: 'nightly-maintenance',
      reason: expect.stringContaining('without their edges'),
    });
    expect(find(plan, 'template', 'nightly-maintenance')).toBeUndefined();
  });

  it('reads survey choices given as a newline string and as a list, multiselect defaults too', () => {
    const deploy = find(plan, 'template', 'deploy-api') as PlannedTemplate;
    expect(deploy.survey).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          variable: 'target_env',
          type: 'choice',
          choices: ['staging', 'production', 'dr-drill'],
          default: 'staging',
        }),
        expect.objectContaining({
          variable: 'feature_flags',
          type: 'multichoice',
          default: ['search-v2', 'new-checkout'],
        }),
        expect.objectContaining({ variable: 'canary_share', type: 'float', default: 0.05 }),
        expect.objectContaining({ variable: 'release_notes', type: 'textarea' }),
      ]),
    );
    const password = deploy.survey!.find((q) => q.variable === 'registry_token')!;
    expect(password.type).toBe('password');
    expect(password).not.toHaveProperty('default');
    expect(deploy.allow_overrides).toEqual(['limit', 'extra_vars', 'inventory_id', 'shards']);
    expect(deploy.spec).toMatchObject({ shards: 4, limit: 'api' });
  });

  it('maps the weekly rule with its zone to cron, and skips the rest with their reasons', () => {
    const weekly = find(plan, 'schedule', 'weekday-rebuild') as PlannedSchedule;
    expect(weekly).toMatchObject({ cron: '30 4 * * 1,3,5', timezone: 'Europe/Warsaw', enabled: true });
    expect(plan.skipped).toContainEqual({
      kind: 'schedule',
      name: 'ec2-refresh-hourly',
      reason: expect.stringContaining('an inventory source'),
    });
  });

  it('flattens a team inside a team, skips the system role, and spreads organization roles', () => {
    const memberships = plan.objects.filter((o) => o.kind === 'membership').map((o) => o.name);
    expect(memberships).toEqual(expect.arrayContaining(['tdiallo in network-ops', 'tdiallo in release-managers']));
    expect(plan.warnings.join('\n')).toContain('network-ops in release-managers');
    expect(plan.skipped).toContainEqual({
      kind: 'role',
      name: 'System Auditor of auditor',
      reason: expect.stringContaining('system-wide'),
    });
    const auditorGrants = plan.objects.filter((o) => o.kind === 'grant' && o.subject === 'user:auditor');
    expect(auditorGrants.length).toBeGreaterThan(5);
    expect(auditorGrants.every((g) => g.kind === 'grant' && g.level === 'use')).toBe(true);
    expect(find(plan, 'user', 'auditor')).toMatchObject({ role: 'viewer' });
  });

  it('skips the custom credential type and its credential, and cloud sources', () => {
    expect(plan.skipped).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'credential_type', name: 'NetBox API Token' }),
        expect.objectContaining({ kind: 'credential', name: 'netbox-token' }),
        expect.objectContaining({ kind: 'inventory_source', name: 'aws-eu-west-1' }),
      ]),
    );
    expect(find(plan, 'credential', 'aws-inventory-readonly')).toMatchObject({ type: 'env', inputs: {} });
    expect(find(plan, 'credential', 'ansible-vault')).toMatchObject({
      type: 'vault_password',
      inputs: { vault_id: 'prod' },
    });
  });
});

describe('a Galaxy / Automation Hub credential', () => {
  it('becomes a galaxy credential with its server URL (the export carries no token)', () => {
    const plan = planOf({
      credentials: [
        {
          name: 'automation hub',
          credential_type: { kind: 'galaxy', name: 'Ansible Galaxy/Automation Hub API Token', type: 'credential_type' },
          inputs: { url: 'https://hub.example.com/api/galaxy/', auth_url: '', token: '$encrypted$' },
        },
      ],
    });
    expect(find(plan, 'credential', 'automation hub')).toMatchObject({
      type: 'galaxy',
      inputs: { url: 'https://hub.example.com/api/galaxy/' },
    });
  });
});

describe('hostile AWX documents', () => {
  const read = (name: string) => JSON.parse(readFileSync(new URL(`hostile/${name}`, FIXTURES), 'utf8'));

  it('a cycle in group children is a problem at the child entry that closes it', () => {
    const r = map(read('awx-group-cycle.json'));
    expect(r).toEqual({
      ok: false,
      problem: {
        path: 'body.inventory.0.related.groups.2.related.children.0',
        message: expect.stringContaining('cycle'),
      },
    });
  });

  it('wrong types are a problem at their path', () => {
    const r = map(read('awx-wrong-types.json'));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problem.path).toBe('body.users');
  });

  it('never throws on junk', () => {
    const junk: unknown[] = [
      null,
      [],
      42,
      'x',
      true,
      {},
      { users: 5 },
      { users: [null] },
      { job_templates: [{}] },
      { inventory: [{ name: 'i', related: { groups: [{ name: 'g', related: { children: [{}] } }] } }] },
    ];
    for (const doc of junk) {
      const r = map(doc);
      expect(typeof r.ok).toBe('boolean');
      if (!r.ok) expect(r.problem.path.startsWith('body')).toBe(true);
    }
  });

  it('never throws on the shared export with values swapped for other types (seeded)', () => {
    const base = JSON.stringify(fixture('awx-workflow-and-roles.json'));
    let seed = 20261126;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const junkValues: unknown[] = [null, 0, -1, 1.5, '', 'x', '$encrypted$', true, [], {}, [null], { type: 'user' }];
    const countNodes = (v: unknown): number =>
      1 + (v && typeof v === 'object' ? Object.values(v).reduce((n: number, x) => n + countNodes(x), 0) : 0);
    // About two values swapped per document, so some documents stay readable and some do not.
    const rate = 2 / countNodes(JSON.parse(base));
    const mutate = (v: unknown): unknown => {
      if (random() < rate) return junkValues[Math.floor(random() * junkValues.length)];
      if (Array.isArray(v)) return v.map(mutate);
      if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, mutate(x)]));
      return v;
    };
    let plans = 0;
    for (let i = 0; i < 300; i++) {
      const r = map(mutate(JSON.parse(base)));
      if (r.ok) plans++;
      else expect(r.problem.path.startsWith('body')).toBe(true);
    }
    // Most mutations break the structure somewhere; some land on fields the mapper tolerates.
    expect(plans).toBeGreaterThan(0);
    expect(plans).toBeLessThan(300);
  });
});
