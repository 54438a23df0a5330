// Imported templates run (issue 16): an AWX export and a Semaphore backup pointing at a real git repository are
// imported, and their templates are launched through the API with real ansible-playbook, on both databases. The
// projects were never synced at import: the first launch resolves the branch head.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ImportReport, Run } from '@baton/contracts';
import { DIALECTS } from '@baton/db/testing';
import { createRepo, tempDir } from '@baton/executor/testing';
import { bearer, createHarness, type Harness, runFinished } from '../testing/harness.js';
import { postImport } from '../testing/import-fixtures.js';

const HELLO = `- hosts: all
  gather_facts: false
  tasks:
    - ansible.builtin.debug:
        msg: "{{ greeting }}, {{ who }}"
`;
const LOCAL_VARS = { ansible_connection: 'local', ansible_python_interpreter: '/usr/bin/python3' };
const ORG = { name: 'Ops', type: 'organization' };

function awxExport(repoUrl: string) {
  const project = { organization: ORG, name: 'hello-repo', type: 'project' };
  const inventory = { organization: ORG, name: 'local-only', type: 'inventory' };
  const jt = (name: string) => ({ organization: ORG, name, type: 'job_template' });
  const wf = { organization: ORG, name: 'hello-twice', type: 'workflow_job_template' };
  const node = (identifier: string) => ({ workflow_job_template: wf, identifier, type: 'workflow_job_template_node' });
  return {
    organizations: [{ name: 'Ops', natural_key: ORG }],
    projects: [
      {
        name: 'hello-repo',
        organization: ORG,
        scm_type: 'git',
        scm_url: repoUrl,
        scm_branch: 'main',
        natural_key: project,
      },
    ],
    inventory: [
      {
        name: 'local-only',
        organization: ORG,
        kind: '',
        variables: '---\ngreeting: hello\n',
        natural_key: inventory,
        related: { hosts: [{ name: 'localhost', enabled: true, variables: JSON.stringify(LOCAL_VARS) }], groups: [] },
      },
    ],
    credentials: [
      {
        name: 'ops-key',
        organization: ORG,
        credential_type: { name: 'Machine', kind: 'ssh', type: 'credential_type' },
        inputs: { username: 'deploy', ssh_key_data: '$encrypted$' },
      },
    ],
    job_templates: [
      {
        name: 'say-hello',
        job_type: 'run',
        playbook: 'hello.yml',
        project,
        inventory,
        extra_vars: '',
        survey_enabled: true,
        ask_limit_on_launch: true,
        natural_key: jt('say-hello'),
        related: {
          credentials: [],
          survey_spec: {
            spec: [{ question_name: 'Who?', type: 'text', variable: 'who', required: true, default: 'world' }],
          },
        },
      },
      {
        name: 'needs-key',
        job_type: 'run',
        playbook: 'hello.yml',
        project,
        inventory,
        extra_vars: '{"who": "nobody"}',
        natural_key: jt('needs-key'),
        related: {
          credentials: [
            {
              organization: ORG,
              name: 'ops-key',
              credential_type: { name: 'Machine', kind: 'ssh', type: 'credential_type' },
              type: 'credential',
            },
          ],
        },
      },
    ],
    workflow_job_templates: [
      {
        name: 'hello-twice',
        organization: ORG,
        extra_vars: '{"who": "pipeline"}',
        natural_key: wf,
        related: {
          workflow_nodes: [
            {
              identifier: 'first',
              unified_job_template: jt('say-hello'),
              related: { success_nodes: [node('second')] },
            },
            { identifier: 'second', unified_job_template: jt('say-hello'), related: {} },
          ],
        },
      },
    ],
  };
}

function semaphoreBackup(repoUrl: string) {
  return {
    meta: { name: 'hello' },
    keys: [{ name: 'None', type: 'none' }],
    repositories: [{ name: 'sem-repo', git_url: repoUrl, git_branch: 'main', ssh_key: 'None' }],
    inventories: [
      {
        name: 'sem-local',
        type: 'static',
        inventory: '[local]\nlocalhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n',
        ssh_key: 'None',
      },
    ],
    environments: [{ name: 'friendly', json: '{"greeting": "good day"}', env: null }],
    templates: [
      {
        name: 'Sem hello',
        app: 'ansible',
        playbook: 'hello.yml',
        repository: 'sem-repo',
        inventory: 'sem-local',
        environment: 'friendly',
        arguments: '["--forks=3"]',
        survey_vars: [{ name: 'who', title: 'Who', type: '', required: true, values: [] }],
      },
    ],
  };
}

describe.each(DIALECTS)('launching imported templates with real ansible on %s', (dialect) => {
  let h: Harness;
  let auth: Record<string, string>;
  let root: string;
  let repo: ReturnType<typeof createRepo>;

  beforeAll(async () => {
    h = await createHarness(dialect, { executors: { count: 1 } });
    auth = bearer(h.admin.token);
    root = tempDir('baton-import-launch');
    repo = createRepo(root);
    fs.writeFileSync(path.join(repo.dir, 'hello.yml'), HELLO);
    repo.git('add', 'hello.yml');
    repo.git('commit', '-q', '-m', 'hello playbook');
  });
  afterAll(async () => {
    await h.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const finished = (id: string) => runFinished(h, id, h.admin.token);

  it('an AWX job template runs, with its survey and inventory variables, at the branch head', async () => {
    const r = await postImport(h, 'awx', JSON.stringify(awxExport(repo.url)));
    expect(r.status).toBe(200);
    const report = r.body as ImportReport;
    const projectId = report.id_map['project:Ops/hello-repo']!;
    expect((await h.http.get(`/v1/projects/${projectId}`).set(auth)).body.last_commit).toBeNull();
    const tpl = report.id_map['job_template:Ops/say-hello']!;
    const launched = await h.http
      .post(`/v1/templates/${tpl}/launch`)
      .set(auth)
      .send({ survey_answers: { who: 'imported world' }, overrides: { limit: 'localhost' } });
    expect(launched.status).toBe(201);
    const run = await finished(launched.body.id as string);
    expect(run).toMatchObject({ conclusion: 'succeeded', template_id: tpl, commit: repo.head() });
    const log = (await h.http.get(`/v1/runs/${run.id}/logs`).set(auth)).text;
    expect(log).toContain('hello, imported world');
    // The first run synced the project, as POST /v1/projects/{id}/sync would have.
    expect((await h.http.get(`/v1/projects/${projectId}`).set(auth)).body.last_commit).toBe(repo.head());
  }, 120_000);

  it('the AWX workflow runs as a pipeline of its two nodes', async () => {
    const report = (await postImport(h, 'awx', JSON.stringify(awxExport(repo.url)))).body as ImportReport;
    const launched = await h.http
      .post(`/v1/templates/${report.id_map['workflow_job_template:Ops/hello-twice']}/launch`)
      .set(auth)
      .send({});
    expect(launched.status).toBe(201);
    const pipeline = await finished(launched.body.id as string);
    expect(pipeline).toMatchObject({ kind: 'pipeline', conclusion: 'succeeded' });
    const steps = (await h.http.get(`/v1/runs/${pipeline.id}/steps`).set(auth)).body as Run[];
    expect(steps.map((s) => s.conclusion)).toEqual(['succeeded', 'succeeded']);
    expect((await h.http.get(`/v1/runs/${steps[1]!.id}/logs`).set(auth)).text).toContain('hello, pipeline');
  }, 120_000);

  it('a template whose imported credential still lacks its secret is refused until the secret is set', async () => {
    const report = (await postImport(h, 'awx', JSON.stringify(awxExport(repo.url)))).body as ImportReport;
    const credential = report.id_map['credential:Ops/ops-key/ssh:Machine']!;
    const refused = await h.http
      .post(`/v1/templates/${report.id_map['job_template:Ops/needs-key']}/launch`)
      .set(auth)
      .send({});
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toContain(credential);
    expect(refused.body.detail).toContain('private_key');
  });

  it('a Semaphore template runs with its environment as extra vars and its arguments as fields', async () => {
    const r = await postImport(h, 'semaphore', JSON.stringify(semaphoreBackup(repo.url)));
    expect(r.status).toBe(200);
    const tpl = (r.body as ImportReport).id_map['template:Sem hello']!;
    const template = (await h.http.get(`/v1/templates/${tpl}`).set(auth)).body;
    expect(template.spec).toMatchObject({ playbook: 'hello.yml', forks: 3, extra_vars: { greeting: 'good day' } });
    const launched = await h.http
      .post(`/v1/templates/${tpl}/launch`)
      .set(auth)
      .send({ survey_answers: { who: 'semaphore' } });
    expect(launched.status).toBe(201);
    const run = await finished(launched.body.id as string);
    expect(run.conclusion).toBe('succeeded');
    expect((await h.http.get(`/v1/runs/${run.id}/logs`).set(auth)).text).toContain('good day, semaphore');
  }, 120_000);
});
