// Importing the shared AWX export (issue 16) on both databases: every mapped object checked field by field through
// the API, the dry run writing nothing, and a re-import under each on_conflict.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ImportReport } from '@baton/contracts';
import { DIALECTS } from '@baton/db/testing';
import { bearer, createHarness, type Harness } from '../testing/harness.js';
import { fixture, postImport, SHARED_IMPORT_FIXTURES, tableCounts } from '../testing/import-fixtures.js';

const AWX = fixture(SHARED_IMPORT_FIXTURES, 'awx-export.json');
const K = {
  prodSsh: 'credential:Engineering/prod-ssh/ssh:Machine',
  become: 'credential:Engineering/prod-ssh/ssh:Machine#become',
  githubScm: 'credential:Engineering/github-scm/scm:Source Control',
  ghPat: 'credential:Engineering/gh-pat/token:GitHub Personal Access Token',
  project: 'project:Engineering/infra-playbooks',
  inventory: 'inventory:Engineering/prod-linux',
  source: 'inventory_source:Engineering/prod-linux/acme-cmdb',
  deploy: 'job_template:Engineering/deploy-web',
  smoke: 'job_template:Engineering/smoke-test',
  release: 'workflow_job_template:Engineering/release-pipeline',
  policy: 'workflow_job_template:Engineering/release-pipeline#approval',
  schedule: 'schedule:job_template:Engineering/deploy-web/nightly-deploy',
  org: 'organization:Engineering',
  sre: 'team:Engineering/SRE',
  alice: 'user:alice',
  bob: 'user:bob',
  admin: 'user:admin',
};

describe.each(DIALECTS)('AWX export import on %s', (dialect) => {
  let h: Harness;
  let auth: Record<string, string>;
  let report: ImportReport;
  let id: (key: string) => string;

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

  it('a dry run answers the full report and writes nothing', async () => {
    const before = await tableCounts(h);
    const dry = await postImport(h, 'awx', AWX, 'dry_run=true');
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ format: 'awx', dry_run: true, on_conflict: 'skip' });
    expect(dry.body.created).toEqual({
      user: 3,
      team: 2,
      membership: 2,
      credential: 4,
      project: 1,
      inventory: 1,
      inventory_source: 1,
      template: 3,
      schedule: 1,
      policy: 1,
      grant: 19,
    });
    expect(await tableCounts(h)).toEqual(before);
    expect((await h.http.get('/v1/projects').set(auth)).body).toEqual([]);
  });

  it('imports every mappable object, reporting what it skipped and why', async () => {
    const before = await tableCounts(h);
    const r = await postImport(h, 'awx', AWX);
    expect(r.status).toBe(200);
    report = r.body as ImportReport;
    id = (key) => {
      const found = report.id_map[key];
      if (!found) throw new Error(`no ${key} in id_map`);
      return found;
    };
    expect(report.dry_run).toBe(false);
    expect(report.created.template).toBe(3);
    expect(report.skipped).toEqual(
      expect.arrayContaining([
        { kind: 'credential', name: 'acme-token', reason: expect.stringContaining('custom credential type') },
        { kind: 'credential_type', name: 'Acme API Token', reason: expect.any(String) },
        { kind: 'notification_template', name: 'ops-slack', reason: expect.any(String) },
        { kind: 'execution_environment', name: 'acme-ee', reason: expect.any(String) },
        { kind: 'schedule', name: 'Cleanup Job Schedule', reason: expect.stringContaining('system job template') },
      ]),
    );
    expect(report.warnings).toEqual(
      expect.arrayContaining([
        expect.stringContaining('db01.acme.example'),
        expect.stringContaining('maint_token'),
        expect.stringContaining('acme-cmdb'),
      ]),
    );
    expect([...report.needs_secret].sort()).toEqual([K.prodSsh, K.become, K.githubScm, K.ghPat].map(id).sort());
    expect(report.users_needing_password.map((u) => u.username).sort()).toEqual(['admin', 'alice', 'bob']);
    // One audit entry per object written (memberships and grants included) and one for the import.
    const after = await tableCounts(h);
    const objects = Object.values(report.created).reduce((a, b) => a + b, 0);
    expect(after.audit_entries - before.audit_entries).toBe(objects + 1);
    const audit = await get('/v1/audit?action=import.awx');
    expect(audit).toHaveLength(1);
    expect(audit[0].summary).toContain('created 3 user');
  });

  it('users keep their AWX role as a Baton role and cannot sign in until a password is set', async () => {
    const users = (await get('/v1/users?limit=100')) as Array<{
      id: string;
      username: string;
      role: string;
      email: string;
    }>;
    const byName = Object.fromEntries(users.map((u) => [u.username, u]));
    expect(byName.alice).toMatchObject({ id: id(K.alice), role: 'operator', email: 'alice@example.com' });
    expect(byName.bob).toMatchObject({ id: id(K.bob), role: 'operator', email: 'bob@example.com' });
    expect(byName.admin).toMatchObject({ id: id(K.admin), role: 'admin', email: 'admin@example.com' });
    for (const password of ['', '$encrypted$', 'correct horse battery staple']) {
      const login = await h.http.post('/v1/auth/login').send({ username: 'alice', password });
      expect([400, 401]).toContain(login.status);
    }
    const set = await h.http
      .put(`/v1/users/${id(K.alice)}`)
      .set(auth)
      .send({ password: 'a new password for alice' });
    expect(set.status).toBe(200);
    const login = await h.http.post('/v1/auth/login').send({ username: 'alice', password: 'a new password for alice' });
    expect(login.status).toBe(200);
  });

  it('organizations and teams become teams; Member roles become memberships', async () => {
    const teams = (await get('/v1/teams')) as Array<{ id: string; name: string }>;
    expect(teams.map((t) => t.name).sort()).toEqual(['Engineering', 'SRE']);
    const members = async (team: string) =>
      ((await get(`/v1/teams/${team}/members`)) as Array<{ username: string }>).map((m) => m.username);
    expect(await members(id(K.org))).toEqual(['bob']);
    expect(await members(id(K.sre))).toEqual(['bob']);
  });

  it('roles become grants: use from Execute/Use/Read/Update/Approve, manage from Admin (spread over the organization)', async () => {
    const grants = (await get('/v1/grants?limit=200')) as Array<{ subject: string; object: string; level: string }>;
    const level = (subject: string, object: string) =>
      grants.find((g) => g.subject === id(subject) && g.object === id(object))?.level;
    expect(level(K.sre, K.deploy)).toBe('use');
    expect(level(K.sre, K.release)).toBe('use');
    expect(level(K.sre, K.prodSsh)).toBe('use');
    expect(level(K.sre, K.become)).toBe('use');
    expect(level(K.sre, K.inventory)).toBe('use');
    expect(level(K.sre, K.project)).toBe('use');
    expect(level(K.bob, K.release)).toBe('use');
    for (const object of [
      K.org,
      K.sre,
      K.project,
      K.inventory,
      K.source,
      K.deploy,
      K.smoke,
      K.release,
      K.prodSsh,
      K.githubScm,
    ])
      expect(level(K.alice, object)).toBe('manage');
    expect(level(K.bob, K.deploy)).toBeUndefined();
  });

  it('credentials keep their non-secret inputs and say they need their secret', async () => {
    const cred = (key: string) => get(`/v1/credentials/${id(key)}`);
    expect(await cred(K.prodSsh)).toMatchObject({
      name: 'prod-ssh',
      type: 'ssh_key',
      inputs: { username: 'deploy' },
      secret_fields: [],
      needs_secret: true,
    });
    expect(await cred(K.become)).toMatchObject({
      name: 'prod-ssh become',
      type: 'become_password',
      inputs: { method: 'sudo' },
      needs_secret: true,
    });
    expect(await cred(K.githubScm)).toMatchObject({
      name: 'github-scm',
      type: 'ssh_key',
      inputs: { username: 'git' },
      needs_secret: true,
    });
    expect(await cred(K.ghPat)).toMatchObject({
      name: 'gh-pat',
      type: 'token',
      description: 'Posts commit statuses for webhook-triggered runs',
      inputs: {},
      needs_secret: true,
    });
    // Setting the secret is an ordinary update, after which the credential no longer needs one.
    const set = await h.http
      .put(`/v1/credentials/${id(K.ghPat)}`)
      .set(auth)
      .send({ inputs: { token: 'ghp_example' } });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ needs_secret: false, secret_fields: ['token'] });
  });

  it('the project is stored never synced, with its credential', async () => {
    expect(await get(`/v1/projects/${id(K.project)}`)).toMatchObject({
      name: 'infra-playbooks',
      git_url: 'git@github.com:acme/infra-playbooks.git',
      branch: 'main',
      credential_id: id(K.githubScm),
      last_commit: null,
      synced_at: null,
    });
  });

  it('the inventory holds the enabled hosts, groups and variables; the scm source points at its file', async () => {
    const inv = await get(`/v1/inventories/${id(K.inventory)}`);
    expect(inv).toMatchObject({ name: 'prod-linux', host_count: 2 });
    expect(inv.groups).toEqual(
      expect.arrayContaining([
        { name: 'web', hosts: ['web01.acme.example', 'web02.acme.example'], children: [] },
        { name: 'db', hosts: [], children: [] },
      ]),
    );
    const content = JSON.parse(inv.content);
    expect(content.all.vars).toEqual({ ntp_server: 'ntp.acme.example' });
    expect(content.all.hosts['web01.acme.example']).toEqual({ ansible_host: '10.0.1.11' });
    expect(content.all.children.web.vars).toEqual({ http_port: 8080 });
    expect(Object.keys(content.all.hosts)).not.toContain('db01.acme.example');
    expect(await get(`/v1/inventory-sources/${id(K.source)}`)).toMatchObject({
      name: 'acme-cmdb',
      kind: 'plugin',
      inventory_id: id(K.inventory),
      project_id: id(K.project),
      path: 'inventories/prod/acme_cmdb.yml',
      refreshed_at: null,
    });
  });

  it('job templates carry playbook, references, vars, slicing, check mode, survey and overrides', async () => {
    const deploy = await get(`/v1/templates/${id(K.deploy)}`);
    expect(deploy).toMatchObject({
      name: 'deploy-web',
      kind: 'run',
      description: 'Rolling deploy of the web tier',
      allow_overrides: ['limit', 'shards'],
      spec: {
        playbook: 'deploy/web.yml',
        project_id: id(K.project),
        inventory_id: id(K.inventory),
        credential_ids: [id(K.prodSsh), id(K.become)],
        extra_vars: { healthcheck_path: '/healthz' },
        forks: 10,
        timeout_s: 3600,
        shards: 3,
      },
    });
    expect(deploy.survey).toEqual([
      {
        variable: 'app_version',
        question: 'Application version',
        description: 'Git tag or semver to deploy',
        type: 'text',
        required: true,
        min: 1,
        max: 64,
        default: '1.4.2',
      },
      {
        variable: 'deploy_strategy',
        question: 'Rollout strategy',
        type: 'choice',
        required: true,
        choices: ['canary', 'rolling', 'all-at-once'],
        default: 'rolling',
      },
      {
        variable: 'batch_size',
        question: 'Batch size',
        description: 'Hosts per batch (serial)',
        type: 'integer',
        required: false,
        min: 1,
        max: 100,
        default: 10,
      },
      expect.objectContaining({ variable: 'maint_token', type: 'password', required: false, max: 128 }),
    ]);
    expect(deploy.survey[3]).not.toHaveProperty('default');
    const smoke = await get(`/v1/templates/${id(K.smoke)}`);
    expect(smoke).toMatchObject({ name: 'smoke-test', kind: 'run', survey: null, allow_overrides: [] });
    expect(smoke.spec).toEqual({
      playbook: 'tests/smoke.yml',
      project_id: id(K.project),
      inventory_id: id(K.inventory),
      credential_ids: [id(K.prodSsh), id(K.become)],
      forks: 5,
      verbosity: 1,
      check: true,
    });
  });

  it('the workflow becomes a pipeline template whose approval node is an approval policy', async () => {
    const release = await get(`/v1/templates/${id(K.release)}`);
    expect(release).toMatchObject({ name: 'release-pipeline', kind: 'pipeline', allow_overrides: ['extra_vars'] });
    expect(release.spec).toMatchObject({
      name: 'release-pipeline',
      extra_vars: { release_channel: 'stable' },
      inventory_id: id(K.inventory),
    });
    expect(release.spec.steps.map((s: { name: string; run_if?: string }) => [s.name, s.run_if])).toEqual([
      ['deploy', undefined],
      ['smoke', undefined],
    ]);
    expect(release.spec.steps[1]).toMatchObject({
      playbook: 'tests/smoke.yml',
      check: true,
      extra_vars: { smoke_depth: 'full' },
    });
    expect(await get(`/v1/policies/${id(K.policy)}`)).toMatchObject({
      name: 'release-pipeline approval',
      enabled: true,
      match: { templates: [id(K.release)] },
      approvers: { users: [id(K.alice), id(K.bob)] },
      min_approvals: 1,
      expires_after_s: 3600,
    });
  });

  it('the daily rule becomes a cron schedule in its zone, its extra data split into survey answers and overrides', async () => {
    const s = await get(`/v1/schedules/${id(K.schedule)}`);
    expect(s).toMatchObject({
      name: 'nightly-deploy',
      cron: '0 2 * * *',
      timezone: 'Europe/Berlin',
      enabled: true,
      target: {
        template_id: id(K.deploy),
        overrides: { limit: 'web' },
        survey_answers: { deploy_strategy: 'rolling' },
      },
    });
    expect(s.next_run_at_local).toMatch(/T02:00:00\+0[12]:00$/);
  });

  it('on_conflict=skip imports nothing twice and points references at what exists', async () => {
    const before = await tableCounts(h);
    const again = await postImport(h, 'awx', AWX);
    expect(again.status).toBe(200);
    expect(again.body.created).toEqual({});
    expect(again.body.id_map[K.deploy]).toBe(id(K.deploy));
    expect(again.body.skipped).toEqual(
      expect.arrayContaining([
        { kind: 'template', name: 'deploy-web', reason: expect.stringContaining('on_conflict=skip') },
      ]),
    );
    const after = await tableCounts(h);
    expect({ ...after, audit_entries: 0 }).toEqual({ ...before, audit_entries: 0 });
    expect(after.audit_entries).toBe(before.audit_entries + 1);
  });

  it('on_conflict=update overwrites fields in place and keeps stored secrets', async () => {
    const edited = JSON.parse(AWX);
    edited.job_templates[0].playbook = 'deploy/web-v2.yml';
    edited.credentials[2].description = 'rotated yearly';
    const r = await postImport(h, 'awx', JSON.stringify(edited), 'on_conflict=update');
    expect(r.status).toBe(200);
    expect(r.body.created).toEqual({});
    expect(r.body.updated).toMatchObject({
      template: 3,
      credential: 4,
      project: 1,
      inventory: 1,
      schedule: 1,
      policy: 1,
    });
    expect(r.body.id_map[K.deploy]).toBe(id(K.deploy));
    expect((await get(`/v1/templates/${id(K.deploy)}`)).spec.playbook).toBe('deploy/web-v2.yml');
    const pat = await get(`/v1/credentials/${id(K.ghPat)}`);
    expect(pat).toMatchObject({ description: 'rotated yearly', secret_fields: ['token'], needs_secret: false });
    expect(r.body.needs_secret).not.toContain(id(K.ghPat));
    expect((await get('/v1/users?limit=100')).find((u: { username: string }) => u.username === 'alice').role).toBe(
      'operator',
    );
  });

  it('on_conflict=rename imports a second copy under new names, wired to the copies', async () => {
    const r = await postImport(h, 'awx', AWX, 'on_conflict=rename');
    expect(r.status).toBe(200);
    expect(r.body.created).toMatchObject({ template: 3, project: 1, inventory: 1, credential: 4, team: 2 });
    expect(r.body.created.user).toBeUndefined();
    const copy = await get(`/v1/templates/${r.body.id_map[K.deploy]}`);
    expect(copy.name).toBe('deploy-web (imported)');
    expect(copy.spec.project_id).toBe(r.body.id_map[K.project]);
    expect(copy.spec.project_id).not.toBe(id(K.project));
    expect((await get(`/v1/projects/${r.body.id_map[K.project]}`)).name).toBe('infra-playbooks (imported)');
    expect(r.body.skipped).toEqual(
      expect.arrayContaining([{ kind: 'user', name: 'alice', reason: expect.stringContaining('never renamed') }]),
    );
  });
});
