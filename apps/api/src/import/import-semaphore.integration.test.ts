// Importing Semaphore backups (issue 16) on both databases: the shared backup checked object by object through the
// API, then a v2.10 backup and a later one (schedules, workflows, secret storages…), and a re-import under skip.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ImportReport } from '@baton/contracts';
import { DIALECTS } from '@baton/db/testing';
import { bearer, createHarness, type Harness } from '../testing/harness.js';
import {
  fixture,
  IMPORT_FIXTURES,
  postImport,
  SHARED_IMPORT_FIXTURES,
  tableCounts,
} from '../testing/import-fixtures.js';

describe.each(DIALECTS)('Semaphore backup import on %s', (dialect) => {
  let h: Harness;
  let auth: Record<string, string>;
  let report: ImportReport;
  const id = (key: string) => {
    const found = report.id_map[key];
    if (!found) throw new Error(`no ${key} in id_map`);
    return found;
  };

  beforeAll(async () => {
    h = await createHarness(dialect);
    auth = bearer(h.admin.token);
  });
  afterAll(async () => {
    await h.close();
  });

  const get = async (path: string) => {
    const r = await h.http.get(path).set(auth);
    expect(r.status).toBe(200);
    return r.body;
  };

  it('imports the shared backup and reports what it left out', async () => {
    const r = await postImport(h, 'semaphore', fixture(SHARED_IMPORT_FIXTURES, 'semaphore-backup.json'));
    expect(r.status).toBe(200);
    report = r.body;
    expect(report).toMatchObject({ format: 'semaphore', source_version: 'v2.10.27+', dry_run: false });
    expect(report.created).toEqual({ credential: 7, project: 2, inventory: 3, template: 3, schedule: 1, trigger: 1 });
    expect(report.skipped).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'repository', name: 'local-scripts' }),
        expect.objectContaining({ kind: 'inventory', name: 'tf-workspace-prod' }),
        expect.objectContaining({ kind: 'inventory', name: 'aws-dynamic' }),
        { kind: 'template', name: 'Terraform apply prod', reason: 'app terraform is not ansible' },
        { kind: 'template', name: 'Rotate logs (bash)', reason: 'app bash is not ansible' },
        expect.objectContaining({ kind: 'integration', name: 'Alertmanager restart hook' }),
        expect.objectContaining({ kind: 'view', name: 'Deploy' }),
      ]),
    );
    expect(report.warnings.join('\n')).toContain('ANSIBLE_HOST_KEY_CHECKING');
    // Every key credential needs its secret; the environment's env credential carries its values.
    expect(report.needs_secret).toHaveLength(6);
    expect(report.needs_secret).not.toContain(id('environment:production'));
  });

  it('keys become credentials by use, sealed secrets only where the backup had values', async () => {
    const cred = (key: string) => get(`/v1/credentials/${id(key)}`);
    expect(await cred('key:deploy-ssh')).toMatchObject({ name: 'deploy-ssh', type: 'ssh_key', needs_secret: true });
    expect(await cred('key:github-https-token')).toMatchObject({ type: 'token', needs_secret: true });
    expect(await cred('key:become-root')).toMatchObject({ type: 'become_password', needs_secret: true });
    expect(await cred('key:Vault Password (vault prod)')).toMatchObject({
      name: 'Vault Password (vault prod)',
      type: 'vault_password',
      inputs: { vault_id: 'prod' },
    });
    expect(await cred('environment:production')).toMatchObject({
      name: 'production env',
      type: 'env',
      secret_fields: ['variables.AWS_DEFAULT_REGION'],
      needs_secret: false,
    });
    const revealed = await h.services.credentials.reveal(id('environment:production'));
    expect(revealed.inputs).toEqual({ variables: { AWS_DEFAULT_REGION: 'eu-west-1' } });
  });

  it('repositories become never-synced projects with their key', async () => {
    expect(await get(`/v1/projects/${id('repository:infra-playbooks')}`)).toMatchObject({
      git_url: 'git@github.com:acme/infra-playbooks.git',
      branch: 'main',
      credential_id: id('key:deploy-ssh'),
      last_commit: null,
    });
    expect(await get(`/v1/projects/${id('repository:terraform-live')}`)).toMatchObject({
      git_url: 'https://github.com/acme/terraform-live.git',
      credential_id: id('key:github-https-token'),
    });
  });

  it('static INI and YAML inventories keep their text and hosts', async () => {
    const ini = await get(`/v1/inventories/${id('inventory:prod-static')}`);
    expect(ini).toMatchObject({ format: 'ini', host_count: 3 });
    expect(ini.content).toBe('[web]\nweb1.acme.internal\nweb2.acme.internal\n\n[db]\ndb1.acme.internal\n');
    const yaml = await get(`/v1/inventories/${id('inventory:staging-yaml')}`);
    expect(yaml).toMatchObject({ format: 'yaml', host_count: 1 });
  });

  it('the ansible template carries its repository, inventory keys, vaults, environment, arguments and survey', async () => {
    const t = await get(`/v1/templates/${id('template:Patch Linux hosts')}`);
    expect(t).toMatchObject({
      name: 'Patch Linux hosts',
      kind: 'run',
      description: 'Monthly OS patching with optional reboot',
    });
    expect(t.spec).toEqual({
      playbook: 'playbooks/patch.yml',
      project_id: id('repository:infra-playbooks'),
      inventory_id: id('inventory:prod-static'),
      credential_ids: [
        id('key:deploy-ssh'),
        id('key:become-root'),
        id('key:Vault Password (vault)'),
        id('key:Vault Password (vault prod)'),
        id('environment:production'),
      ],
      extra_vars: { app_version: '1.4.2', region: 'eu-west-1' },
      forks: 20,
    });
    expect(
      t.survey.map((q: { variable: string; type: string; required: boolean }) => [q.variable, q.type, q.required]),
    ).toEqual([
      ['reboot', 'choice', true],
      ['serial', 'integer', false],
      ['change_ticket', 'text', true],
      ['api_token', 'password', false],
    ]);
    expect(t.survey[0].choices).toEqual(['true', 'false']);
    expect(t.allow_overrides).toEqual(expect.arrayContaining(['limit', 'extra_vars']));
  });

  it('the cron becomes a UTC schedule, the GitHub integration a signed trigger with its filters', async () => {
    const schedule = await get(`/v1/schedules/${id('schedule:Patch Linux hosts')}`);
    expect(schedule).toMatchObject({
      cron: '0 3 * * 0',
      timezone: 'UTC',
      enabled: true,
      target: { template_id: id('template:Patch Linux hosts') },
    });
    const trigger = await get(`/v1/triggers/${id('integration:GitHub push to main')}`);
    expect(trigger).toMatchObject({
      name: 'GitHub push to main',
      require_signature: true,
      filters: { events: ['push'], branches: ['main'] },
      target: { template_id: id('template:Deploy to prod') },
    });
    // The signing secret is new; rotating it is how an admin reads one to give the forge.
    const rotated = await h.http.post(`/v1/triggers/${trigger.id}/rotate-secret`).set(auth).send();
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toEqual(expect.any(String));
  });

  it('a second import with on_conflict=skip writes only its audit entry', async () => {
    const before = await tableCounts(h);
    const again = await postImport(h, 'semaphore', fixture(SHARED_IMPORT_FIXTURES, 'semaphore-backup.json'));
    expect(again.status).toBe(200);
    expect(again.body.created).toEqual({});
    expect(again.body.id_map).toEqual(report.id_map);
    const after = await tableCounts(h);
    expect({ ...after, audit_entries: 0 }).toEqual({ ...before, audit_entries: 0 });
  });

  it('a v2.10 backup: survey vars as a JSON string, one environment, cron on templates, a file inventory as a source', async () => {
    const r = await postImport(h, 'semaphore', fixture(IMPORT_FIXTURES, 'semaphore-v2.10.json'));
    expect(r.status).toBe(200);
    const v210 = r.body as ImportReport;
    expect(v210.source_version).toBe('v2.10.2–v2.10.26');
    expect(v210.created).toMatchObject({ template: 4, schedule: 3, inventory_source: 1 });
    const staging = await get(`/v1/schedules/${v210.id_map['schedule:Staging refresh']}`);
    expect(staging).toMatchObject({ cron: '*/30 8-18 * * 1-5', timezone: 'UTC' });
    const daily = await get(`/v1/schedules/${v210.id_map['schedule:Collect facts (dynamic inventory)']}`);
    expect(daily.cron).toBe('0 0 * * *');
    const source = await get(`/v1/inventory-sources/${v210.id_map['inventory_source:payments-dynamic']}`);
    expect(source).toMatchObject({
      kind: 'plugin',
      path: 'inventory/aws_ec2.yml',
      project_id: v210.id_map['repository:ops-scripts'],
    });
    const deploy = await get(`/v1/templates/${v210.id_map['template:Deploy payments API']}`);
    expect(deploy.survey.length).toBeGreaterThan(0);
    expect(deploy.spec.project_id).toBe(v210.id_map['repository:payments-ansible']);
  });

  it('a later backup: top-level schedules, a workflow with an approval, and the kinds Baton has none of', async () => {
    const r = await postImport(h, 'semaphore', fixture(IMPORT_FIXTURES, 'semaphore-later.json'));
    expect(r.status).toBe(200);
    const later = r.body as ImportReport;
    expect(later.source_version).toBe('newer than v2.11');
    const pipeline = await get(`/v1/templates/${later.id_map['workflow:Config release']}`);
    expect(pipeline.kind).toBe('pipeline');
    expect(pipeline.spec.steps.length).toBeGreaterThanOrEqual(2);
    const policy = await get(`/v1/policies/${later.id_map['approval:Config release']}`);
    expect(policy).toMatchObject({
      match: { templates: [pipeline.id] },
      approvers: { roles: ['admin'] },
      expires_after_s: 3600,
    });
    const push = await get(`/v1/schedules/${later.id_map['schedule:push on main change']}`);
    expect(push).toMatchObject({ cron: '*/5 * * * *', target: { overrides: { limit: 'edge-rtr-01' } } });
    const kinds = new Set(later.skipped.map((s) => s.kind));
    for (const kind of ['secret_storage', 'runner', 'role'])
      expect(
        [...kinds].some((k) => k.startsWith(kind)) || later.warnings.some((w) => w.includes(kind.replace('_', ' '))),
      ).toBe(true);
    expect(later.skipped).toEqual(
      expect.arrayContaining([
        { kind: 'schedule', name: 'one-off lab wipe', reason: expect.stringContaining('one-off') },
      ]),
    );
  });
});
