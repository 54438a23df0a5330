// POST /v1/runs with `ref` (issue 11, "Run spec"): a branch, tag or full commit id of the project runs instead of its
// branch head, resolved and recorded at submit. Real git repositories, real ansible-playbook through the embedded
// executors, on SQLite and PostgreSQL.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Run } from '@baton/contracts';
import { DIALECTS } from '@baton/db/testing';
import { createRepo, tempDir } from '@baton/executor/testing';
import { bearer, createHarness, expectProblem, type Harness } from '../testing/harness.js';

const LOCAL = 'localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n';
/** A playbook that prints `message`, or fails with it. */
const saying = (message: string, fail = false) =>
  `- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.${fail ? 'fail' : 'debug'}:\n        msg: ${message}\n`;

/**
 * A project whose refs each hold a different hello.yml: `v1` (lightweight) and the older commit under it, `v2`
 * (annotated), `broken` (a tag whose play fails), the head of `main`, and a branch `feature` of its own.
 */
function refsRepo(root: string) {
  const repo = createRepo(root, 'project');
  const say = (message: string, fail = false) => {
    fs.writeFileSync(path.join(repo.dir, 'hello.yml'), saying(message, fail));
    repo.git('add', 'hello.yml');
    repo.git('commit', '-q', '-m', message);
    return repo.git('rev-parse', 'HEAD');
  };
  const v1 = say('hello-from-v1');
  repo.git('tag', 'v1');
  const v2 = say('hello-from-v2');
  repo.git('tag', '-a', '-m', 'release 2', 'v2');
  const broken = say('broken-at-tag', true);
  repo.git('tag', 'broken');
  const head = say('hello-from-main');
  repo.git('checkout', '-q', '-b', 'feature');
  const feature = say('hello-from-feature');
  repo.git('checkout', '-q', 'main');
  return { repo, commits: { v1, v2, broken, head, feature } };
}

describe.each(DIALECTS)('runs of a ref on %s', (dialect) => {
  let h: Harness;
  let token: string;
  let project: string;
  const root = tempDir(`baton-run-ref-${dialect}`);
  const { repo, commits } = refsRepo(root);

  beforeAll(async () => {
    h = await createHarness(dialect, { executors: { count: 1 } });
    token = (await h.user('operator')).token;
    const res = await h.http
      .post('/v1/projects')
      .set(bearer(token))
      .send({ name: `refs ${dialect}`, git_url: repo.url, branch: 'main' });
    expect(res.status).toBe(201);
    project = res.body.id as string;
  });
  afterAll(async () => {
    await h.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const submit = (body: Record<string, unknown>) => h.http.post('/v1/runs').set(bearer(token)).send(body);
  const get = async (id: string): Promise<Run> => {
    const res = await h.http.get(`/v1/runs/${id}`).set(bearer(token));
    expect(res.status).toBe(200);
    return res.body as Run;
  };
  /** Polls the run until it has finished (a safety net of 120 s, not a speed threshold). */
  const finished = async (id: string): Promise<Run> => {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const run = await get(id);
      if (run.status === 'finished') return run;
      if (Date.now() > deadline) throw new Error(`run ${id} still ${run.status}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  const logOf = async (id: string): Promise<string> => {
    const res = await h.http.get(`/v1/runs/${id}/logs`).set(bearer(token));
    expect(res.status).toBe(200);
    return res.text;
  };
  const runCount = async () => Object.values(await h.tdb.db.repos.runs.countByStatus()).reduce((a, b) => a + b, 0);
  const messages = ['hello-from-v1', 'hello-from-v2', 'hello-from-main', 'hello-from-feature'];

  it.each<[string, () => string | undefined, keyof typeof commits, string]>([
    ['no ref: the head of the project branch', () => undefined, 'head', 'hello-from-main'],
    ['a branch other than the project branch', () => 'feature', 'feature', 'hello-from-feature'],
    ['a lightweight tag', () => 'v1', 'v1', 'hello-from-v1'],
    ['an annotated tag (its commit, not the tag object)', () => 'v2', 'v2', 'hello-from-v2'],
    ['an older full commit id, at no branch head', () => commits.v1, 'v1', 'hello-from-v1'],
  ])('runs %s, records ref and commit, and runs that content', async (_what, ref, commit, message) => {
    const given = ref();
    const res = await submit({
      playbook: 'hello.yml',
      project_id: project,
      inventory: LOCAL,
      ...(given === undefined ? {} : { ref: given }),
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ project_id: project, ref: given ?? null, commit: commits[commit] });
    expect(commits[commit]).toMatch(/^[0-9a-f]{40}$/);
    if (commit !== 'head') expect(commits[commit]).not.toBe(repo.head('main'));

    const run = await finished(res.body.id as string);
    expect(run).toMatchObject({ conclusion: 'succeeded', ref: given ?? null, commit: commits[commit] });
    const log = await logOf(run.id);
    expect(log).toContain(`"msg": "${message}"`);
    for (const other of messages.filter((m) => m !== message)) expect(log).not.toContain(other);
  });

  it('answers 422 at body.ref for a ref the project does not have, and stores nothing', async () => {
    const before = await runCount();
    for (const ref of ['nope', 'release/9', '0'.repeat(40), commits.v1.slice(0, 12)]) {
      const res = await submit({ playbook: 'hello.yml', project_id: project, inventory: LOCAL, ref });
      expectProblem(res, 422, 'body.ref');
      expect(res.body.errors).toEqual([{ path: 'body.ref', message: `ref ${ref} not found in ${repo.url}` }]);
    }
    expect(await runCount()).toBe(before);
  });

  it('answers 400 at body.ref for a ref without project_id, a ref of bad syntax and one of the wrong type', async () => {
    const before = await runCount();
    const inline = await submit({ playbook: saying('inline'), inventory: LOCAL, ref: 'v1' });
    expectProblem(inline, 400, 'body.ref');
    for (const ref of ['-x', '--upload-pack=touch /tmp/x', 'a..b', 'a b', 'x'.repeat(300), '', 'a~1', 'a:b']) {
      const res = await submit({ playbook: 'hello.yml', project_id: project, inventory: LOCAL, ref });
      expectProblem(res, 400, 'body.ref');
    }
    for (const ref of [42, true, null, ['v1'], { name: 'v1' }]) {
      const res = await submit({ playbook: 'hello.yml', project_id: project, inventory: LOCAL, ref });
      expectProblem(res, 400, 'body.ref');
    }
    expect(await runCount()).toBe(before);
  });

  it('refuses with a 4xx at body.ref a ref git refuses that the request schema lets through', async () => {
    // ".hidden" and "a.lock/b" break git's ref rules (a part starting with "." or ending with ".lock").
    for (const ref of ['.hidden', 'a.lock/b', '@']) {
      const res = await submit({ playbook: 'hello.yml', project_id: project, inventory: LOCAL, ref });
      expect([400, 422]).toContain(res.status);
      expectProblem(res, res.status, 'body.ref');
    }
  });

  it('retries a run of a ref at the same commit, even after the ref moved', async () => {
    const res = await submit({ playbook: 'hello.yml', project_id: project, inventory: LOCAL, ref: 'broken' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ ref: 'broken', commit: commits.broken });
    const first = await finished(res.body.id as string);
    expect(first.conclusion).toBe('failed');
    expect(await logOf(first.id)).toContain('broken-at-tag');

    // The tag now names the head of main, where the play succeeds: a retry must not follow it.
    repo.git('tag', '-f', 'broken', 'main');
    const retry = await h.http.post(`/v1/runs/${first.id}/retry`).set(bearer(token)).send();
    expect(retry.status).toBe(201);
    expect(retry.body).toMatchObject({ retry_of: first.id, ref: 'broken', commit: commits.broken });
    const again = await finished(retry.body.id as string);
    expect(again).toMatchObject({ conclusion: 'failed', commit: commits.broken });
    const log = await logOf(again.id);
    expect(log).toContain('broken-at-tag');
    expect(log).not.toContain('hello-from-main');

    // A new submission of the moved tag does resolve it anew.
    const fresh = await submit({ playbook: 'hello.yml', project_id: project, inventory: LOCAL, ref: 'broken' });
    expect(fresh.status).toBe(201);
    expect(fresh.body).toMatchObject({ ref: 'broken', commit: commits.head });
    expect(await finished(fresh.body.id as string)).toMatchObject({ conclusion: 'succeeded' });
  });
});
