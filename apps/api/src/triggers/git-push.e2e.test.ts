// The whole webhook path (issue 11, "Acceptance"): a real `git push` to a local bare repository whose post-receive
// hook (sh, openssl, curl) posts a GitHub-shaped, signed push payload to Baton listening on a real port; the run
// that follows is of exactly the pushed commit and finishes, through real ansible-playbook.
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Run } from '@baton/contracts';
import { DIALECTS } from '@baton/db/testing';
import { tempDir } from '@baton/executor/testing';
import { bearer, createHarness, type Harness } from '../testing/harness.js';

const LOCAL = 'localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n';
const GIT = ['-c', 'user.name=Baton Test', '-c', 'user.email=test@baton.invalid'];
const saying = (message: string) =>
  `- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.debug:\n        msg: ${message}\n`;

/** A post-receive hook that posts each pushed ref the way GitHub does, signed with `secret`; answers land in `out`. */
function postReceive(hookUrl: string, secret: string, cloneUrl: string, out: string): string {
  return `#!/bin/sh
set -eu
n=0
while read old new ref; do
  n=$((n + 1))
  body=$(printf '{"ref":"%s","before":"%s","after":"%s","repository":{"full_name":"local/site","clone_url":"%s"}}' "$ref" "$old" "$new" '${cloneUrl}')
  sig=$(printf '%s' "$body" | openssl dgst -sha256 -hmac '${secret}' | awk '{print $NF}')
  curl -sS --max-time 120 -o '${out}'.$n.body -w '%{http_code}' -X POST \\
    -H 'Content-Type: application/json' -H 'X-GitHub-Event: push' \\
    -H "X-GitHub-Delivery: $(cat /proc/sys/kernel/random/uuid)" \\
    -H "X-Hub-Signature-256: sha256=$sig" \\
    --data-binary "$body" '${hookUrl}' > '${out}'.$n.status
done
`;
}

describe.each(DIALECTS)('git push to a webhook trigger on %s', (dialect) => {
  let h: Harness;
  let server: Server;
  let token: string;
  const root = tempDir(`baton-git-push-${dialect}`);
  const bare = path.join(root, 'site.git');
  const work = path.join(root, 'work');
  const out = path.join(root, 'answer');
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', [...GIT, ...args], { cwd, encoding: 'utf8' }).trim();
  const commit = (message: string) => {
    fs.writeFileSync(path.join(work, 'site.yml'), saying(message));
    git(work, 'add', 'site.yml');
    git(work, 'commit', '-q', '-m', message);
    return git(work, 'rev-parse', 'HEAD');
  };

  /** Pushes without blocking the event loop: the post-receive hook's curl is answered by this very process. */
  const push = (branch: string) => promisify(execFile)('git', [...GIT, 'push', '-q', 'origin', branch], { cwd: work });

  beforeAll(async () => {
    execFileSync('git', ['init', '-q', '--bare', '-b', 'main', bare]);
    execFileSync('git', ['clone', '-q', bare, work], { stdio: 'ignore' });
    git(work, 'checkout', '-q', '-B', 'main');
    commit('first-revision');
    git(work, 'push', '-q', 'origin', 'main');
    h = await createHarness(dialect, { executors: { count: 1 } });
    server = await new Promise<Server>((resolve) => {
      const s = h.app.listen(0, '127.0.0.1', () => resolve(s));
    });
    token = (await h.user('operator')).token;
  }, 60_000);
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await h.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const finished = async (id: string): Promise<Run> => {
    for (;;) {
      const res = await h.http.get(`/v1/runs/${id}`).set(bearer(token));
      expect(res.status).toBe(200);
      if ((res.body as Run).status === 'finished') return res.body as Run;
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  const answer = (n: number) => ({
    status: fs.readFileSync(`${out}.${n}.status`, 'utf8'),
    body: JSON.parse(fs.readFileSync(`${out}.${n}.body`, 'utf8')) as {
      fired: boolean;
      run_id?: string;
      reason?: string;
    },
  });

  it('ends in a finished run of exactly the pushed commit', async () => {
    const project = await h.http
      .post('/v1/projects')
      .set(bearer(token))
      .send({ name: `site ${dialect}`, git_url: `file://${bare}` });
    expect(project.status).toBe(201);
    const trigger = await h.http
      .post('/v1/triggers')
      .set(bearer(token))
      .send({
        name: `on push ${dialect}`,
        target: { run: { project_id: project.body.id, playbook: 'site.yml', inventory: LOCAL } },
        filters: { branches: ['main'] },
      });
    expect(trigger.status).toBe(201);
    const port = (server.address() as AddressInfo).port;
    const hookUrl = `http://127.0.0.1:${port}/hooks/${trigger.body.token as string}`;
    expect(trigger.body.hook_url).toBe(`http://127.0.0.1:8080/hooks/${trigger.body.token as string}`);
    const hook = path.join(bare, 'hooks', 'post-receive');
    fs.writeFileSync(hook, postReceive(hookUrl, trigger.body.secret as string, `file://${bare}`, out), { mode: 0o755 });

    const pushed = commit('second-revision');
    await push('main');
    const first = answer(1);
    expect(first.status).toBe('202');
    expect(first.body).toEqual({ fired: true, run_id: expect.stringMatching(/^run_/) });
    const run = await finished(first.body.run_id!);
    expect(run).toMatchObject({
      origin: 'trigger',
      trigger_id: trigger.body.id,
      commit: pushed,
      ref: pushed,
      conclusion: 'succeeded',
    });
    const log = await h.http.get(`/v1/runs/${run.id}/logs`).set(bearer(token));
    expect(log.text).toContain('second-revision');
    expect(log.text).not.toContain('first-revision');

    // A branch the filters leave out: the hook answers, nothing runs.
    git(work, 'checkout', '-q', '-b', 'feature');
    commit('feature-revision');
    await push('feature');
    expect(answer(1)).toEqual({
      status: '202',
      body: { fired: false, reason: expect.stringMatching(/feature matches none/) },
    });
    const runs = await h.http.get(`/v1/runs?trigger=${trigger.body.id as string}`).set(bearer(token));
    expect((runs.body as Run[]).map((r) => r.id)).toEqual([run.id]);
  }, 180_000);
});
