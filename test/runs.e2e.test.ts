// The run engine end to end: the real app with its embedded executors, real ansible-playbook, local hosts and
// real sshd hosts in network namespaces reached with an ssh_key credential, on SQLite and PostgreSQL.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Run, RunEvent } from '@baton/contracts';
import { DIALECTS } from '@baton/db/testing';
import type { Server } from 'node:http';
import { bearer, createHarness, type Harness } from '../apps/api/src/testing/harness.js';
import { openSse } from '../apps/api/src/testing/sse-client.js';
import { type SshHosts, startSshHosts } from './support/ssh-hosts.js';

const LOCAL = 'ansible_connection=local ansible_python_interpreter=/usr/bin/python3';

describe.each(DIALECTS)('runs end to end on %s', (dialect) => {
  let h: Harness;
  let ssh: SshHosts;
  let auth: Record<string, string>;
  let markers: string;
  let server: Server;
  let base: string;
  const ids: Record<string, string> = {};

  const submit = async (body: Record<string, unknown>): Promise<Run> => {
    const res = await h.http.post('/v1/runs').set(auth).send(body);
    if (res.status !== 201) throw new Error(`submit: ${res.status} ${res.text}`);
    return res.body as Run;
  };
  const get = async (id: string): Promise<Run> => (await h.http.get(`/v1/runs/${id}`).set(auth)).body as Run;
  const finished = async (id: string, timeoutMs = 90_000): Promise<Run> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const run = await get(id);
      if (run.status === 'finished') return run;
      if (Date.now() > deadline) throw new Error(`run ${id} still ${run.status} after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 150));
    }
  };
  const logOf = async (id: string): Promise<string> => (await h.http.get(`/v1/runs/${id}/logs`).set(auth)).text;
  const eventsOf = async (id: string, query = ''): Promise<RunEvent[]> =>
    (await h.http.get(`/v1/runs/${id}/events${query}`).set(auth)).body as RunEvent[];
  const inventory = async (name: string, content: string): Promise<string> => {
    const res = await h.http.post('/v1/inventories').set(auth).send({ name, content });
    if (res.status !== 201) throw new Error(`inventory: ${res.status} ${res.text}`);
    return res.body.id as string;
  };

  beforeAll(async () => {
    h = await createHarness(dialect, { executors: { count: 4, interruptGraceMs: 3_000, terminateGraceMs: 2_000 } });
    auth = bearer(h.admin.token);
    ssh = await startSshHosts({ count: 4 });
    markers = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-e2e-'));
    const cred = await h.http
      .post('/v1/credentials')
      .set(auth)
      .send({ name: `root key ${dialect}`, type: 'ssh_key', inputs: { private_key: ssh.clientKey.privateKey } });
    if (cred.status !== 201) throw new Error(`credential: ${cred.status} ${cred.text}`);
    ids.cred = cred.body.id;
    ids.local = await inventory('local', `alpha ${LOCAL}\nbeta ${LOCAL}\n`);
    ids.ssh = await inventory('ssh', `[fleet]\n${ssh.inventory()}`);
    // .250 of the subnet has no host behind it: ssh fails to connect, ansible reports it unreachable.
    const ghost = ssh.subnet.replace(/0\/24$/, '250');
    ids.withGhost = await inventory(
      'with ghost',
      `[fleet]\n${ssh.inventory({ names: [ssh.hosts[0]!.name] })}ghost ansible_host=${ghost} ansible_user=root ansible_ssh_extra_args='-o ConnectTimeout=1'\n`,
    );
    server = h.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  }, 120_000);

  afterAll(async () => {
    await new Promise((r) => server?.close(r));
    await ssh?.stop();
    await h?.close();
    if (markers) fs.rmSync(markers, { recursive: true, force: true });
  });

  it('runs on local hosts: success, a failing host, a playbook that does not parse, check mode', async () => {
    const target = path.join(markers, 'check-mode-file');
    const [ok, oneFails, broken, dry] = await Promise.all([
      submit({
        playbook:
          '- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.command: echo hello-from-{{ inventory_hostname }}\n',
        inventory_id: ids.local,
        verbosity: 1,
      }),
      submit({
        playbook:
          "- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.fail: { msg: beta breaks }\n      when: inventory_hostname == 'beta'\n",
        inventory_id: ids.local,
      }),
      submit({
        playbook: '- hosts: all\n  tasks:\n    - ansible.builtin.debug: msg="unclosed\n  - : [\n',
        inventory_id: ids.local,
      }),
      submit({
        playbook: `- hosts: alpha\n  gather_facts: false\n  tasks:\n    - ansible.builtin.copy: { content: drift, dest: ${target} }\n`,
        inventory_id: ids.local,
        check: true,
      }),
    ]);

    const okRun = await finished(ok.id);
    expect(okRun).toMatchObject({
      conclusion: 'succeeded',
      worker: expect.any(String),
      exit_code: 0,
      host_summary: { total: 2, changed: 2, failed: 0 },
    });
    expect(okRun.host_stats).toMatchObject({ alpha: { changed: 1, failed: 0 }, beta: { changed: 1, failed: 0 } });
    // verbosity 1 (-v) prints each result, stdout included.
    expect(await logOf(ok.id)).toContain('hello-from-beta');
    const okEvents = await eventsOf(ok.id);
    expect(okEvents.map((e) => e.seq)).toEqual(okEvents.map((_, i) => i + 1));
    expect(okEvents[okEvents.length - 1]).toMatchObject({
      kind: 'status',
      data: { status: 'finished', conclusion: 'succeeded' },
    });
    expect((await eventsOf(ok.id, '?kind=runner_on_ok&host=beta')).map((e) => e.data.host)).toEqual(['beta']);

    const failRun = await finished(oneFails.id);
    expect(failRun).toMatchObject({ conclusion: 'failed', host_summary: { total: 2, failed: 1 } });
    expect(failRun.host_stats).toMatchObject({ alpha: { failed: 0 }, beta: { failed: 1 } });

    const brokenRun = await finished(broken.id);
    expect(brokenRun).toMatchObject({ conclusion: 'failed', reason: 'bad_playbook' });
    expect(await logOf(broken.id)).toMatch(/Syntax Error|could not be parsed|YAML/i);

    const dryRun = await finished(dry.id);
    expect(dryRun).toMatchObject({ conclusion: 'succeeded', check: true, host_summary: { changed: 1 } });
    expect(fs.existsSync(target)).toBe(false);
    expect((await eventsOf(dry.id, '?kind=runner_on_ok')).some((e) => e.data.changed === true)).toBe(true);
  }, 180_000);

  it('runs over ssh with an ssh_key credential; an unreachable host fails the run', async () => {
    const [fleet, ghost] = await Promise.all([
      submit({
        playbook: '- hosts: fleet\n  gather_facts: false\n  tasks:\n    - ansible.builtin.command: hostname -I\n',
        inventory_id: ids.ssh,
        credential_ids: [ids.cred],
        verbosity: 1,
      }),
      submit({
        playbook: '- hosts: fleet\n  gather_facts: false\n  tasks:\n    - ansible.builtin.ping:\n',
        inventory_id: ids.withGhost,
        credential_ids: [ids.cred],
      }),
    ]);
    const fleetRun = await finished(fleet.id);
    expect(fleetRun).toMatchObject({ conclusion: 'succeeded', host_summary: { total: 4, changed: 4 } });
    // Each host answered from its own namespace: its own address is in the log.
    const log = await logOf(fleet.id);
    for (const host of ssh.hosts) expect(log).toContain(host.address);

    const ghostRun = await finished(ghost.id);
    expect(ghostRun).toMatchObject({ conclusion: 'failed', host_summary: { total: 2, ok: 1, unreachable: 1 } });
    expect(ghostRun.host_stats?.ghost).toMatchObject({ unreachable: 1 });
    const runs = (await h.http.get('/v1/runs?host=ghost').set(auth)).body as Run[];
    expect(runs.map((r) => r.id)).toEqual([ghost.id]);
  }, 180_000);

  it('splits a run into shards; a failing shard fails the split and retry re-runs only that shard', async () => {
    const names = ssh.hosts.map((x) => x.name).sort();
    const failing = names[1]!; // shard 1 of 2 holds names[1] and names[3]
    const okFile = (host: string) => path.join(markers, `shard-ok-${host}`);
    for (const name of names) if (name !== failing) fs.writeFileSync(okFile(name), '');
    // The hosts share this machine's filesystem: the marker decides which host fails.
    const playbook = `- hosts: fleet\n  gather_facts: false\n  tasks:\n    - ansible.builtin.stat: { path: "${markers}/shard-ok-{{ inventory_hostname }}" }\n      register: marker\n    - ansible.builtin.fail: { msg: no marker }\n      when: not marker.stat.exists\n`;
    const split = await submit({ playbook, inventory_id: ids.ssh, credential_ids: [ids.cred], shards: 2 });
    expect(split).toMatchObject({ kind: 'split', shard_count: 2 });
    const done = await finished(split.id);
    expect(done).toMatchObject({ conclusion: 'failed', host_summary: { total: 4, failed: 1 } });
    const shards = (await h.http.get(`/v1/runs/${split.id}/shards`).set(auth)).body as Run[];
    expect(shards.map((s) => [s.shard_index, s.hosts, s.conclusion])).toEqual([
      [0, [names[0], names[2]], 'succeeded'],
      [1, [names[1], names[3]], 'failed'],
    ]);

    fs.writeFileSync(okFile(failing), '');
    const retry = await h.http.post(`/v1/runs/${split.id}/retry`).set(auth);
    expect(retry.status).toBe(201);
    expect(retry.body).toMatchObject({ kind: 'split', retry_of: split.id, shard_count: 1 });
    const retried = await finished(retry.body.id);
    expect(retried).toMatchObject({ conclusion: 'succeeded', host_summary: { total: 2 } });
    const retryShards = (await h.http.get(`/v1/runs/${retry.body.id}/shards`).set(auth)).body as Run[];
    expect(retryShards.map((s) => s.hosts)).toEqual([[names[1], names[3]]]);
    // Nothing failed any more: a second retry is a conflict.
    expect((await h.http.post(`/v1/runs/${retry.body.id}/retry`).set(auth)).status).toBe(409);
  }, 240_000);

  it('cancels a running run: ansible stops and the run finishes canceled', async () => {
    const run = await submit({
      playbook: '- hosts: alpha\n  gather_facts: false\n  tasks:\n    - ansible.builtin.command: sleep 120\n',
      inventory_id: ids.local,
    });
    const deadline = Date.now() + 60_000;
    while (!(await eventsOf(run.id, '?kind=playbook_on_task_start')).length) {
      if (Date.now() > deadline) throw new Error('the task never started');
      await new Promise((r) => setTimeout(r, 100));
    }
    const cancel = await h.http.post(`/v1/runs/${run.id}/cancel`).set(auth);
    expect(cancel.status).toBe(202);
    expect(cancel.body).toMatchObject({ status: 'running', cancel_requested_at: expect.any(String) });
    const canceled = await finished(run.id, 15_000);
    expect(canceled).toMatchObject({ conclusion: 'canceled' });
    expect((await h.http.post(`/v1/runs/${run.id}/cancel`).set(auth)).status).toBe(409);
  }, 120_000);

  it('streams a run over SSE and resumes after a disconnect without gaps or duplicates', async () => {
    const playbook =
      '- hosts: all\n  gather_facts: false\n  tasks:\n' +
      [1, 2, 3, 4].map((n) => `    - ansible.builtin.command: sleep 0.3\n      name: step ${n}\n`).join('');
    const run = await submit({ playbook, inventory_id: ids.local });
    const first = await openSse(`${base}/v1/runs/${run.id}/stream`, auth);
    expect(first.status).toBe(200);
    await first.until((s) => s.seqs().length >= 3, 'three events', 60_000);
    first.close();
    const seen = first.seqs();
    const second = await openSse(`${base}/v1/runs/${run.id}/stream`, {
      ...auth,
      'Last-Event-ID': String(seen[seen.length - 1]),
    });
    await second.until((s) => s.ended(), 'the end of the stream', 90_000);
    const all = [...seen, ...second.seqs()];
    expect(all).toEqual(all.map((_, i) => i + 1));
    expect(second.frames.filter((f) => f.event === 'end')).toHaveLength(1);
    const final = await get(run.id);
    expect(final.conclusion).toBe('succeeded');
    expect(all[all.length - 1]).toBe(final.last_seq);
  }, 120_000);
});
