// GET /metrics (issue 14, "Metrics") of a server that has run real playbooks through its embedded executor: the
// bearer token, promtool's verdict on the exposition, the run counters and histograms the ingester feeds, the
// gauges read at scrape, and no unbounded or personal label values. On SQLite and PostgreSQL.
import fs from 'node:fs';
import type { Server } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Run } from '@baton/contracts';
import { newId } from '@baton/core';
import { DIALECTS, testRunRow } from '@baton/db/testing';
import { createRepo, tempDir } from '@baton/executor/testing';
import { bearer, createHarness, expectProblem, type Harness } from '../testing/harness.js';
import { checkMetrics, samples, valueOf } from '../testing/prometheus.js';
import { openSse } from '../testing/sse-client.js';

const TOKEN = 'scrape-me-0123456789-abcdef';
const LOCAL = 'localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n';
const play = (task: string) => `- hosts: all\n  gather_facts: false\n  tasks:\n${task}`;

/** Polls a run until it has finished (a safety net of 120 s, not a speed threshold). */
async function finished(h: Harness, token: string, id: string): Promise<Run> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const res = await h.http.get(`/v1/runs/${id}`).set(bearer(token));
    expect(res.status).toBe(200);
    if (res.body.status === 'finished') return res.body as Run;
    if (Date.now() > deadline) throw new Error(`run ${id} still ${res.body.status}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe.each(DIALECTS)('GET /metrics after real runs on %s', (dialect) => {
  let h: Harness;
  let operator: { username: string; token: string };
  let text: string;
  const runs: Run[] = [];
  const root = tempDir(`baton-metrics-${dialect}`);
  const target = path.join(root, 'drifted.txt');
  const repo = createRepo(root, 'project');
  fs.writeFileSync(path.join(repo.dir, 'ok.yml'), play('    - ansible.builtin.debug:\n        msg: fine\n'));
  fs.writeFileSync(path.join(repo.dir, 'fail.yml'), play('    - ansible.builtin.fail:\n        msg: broken\n'));
  // In check mode a file that is not there yet is a resource drifting from its desired state.
  fs.writeFileSync(
    path.join(repo.dir, 'drift.yml'),
    play(`    - ansible.builtin.copy:\n        dest: ${target}\n        content: "desired\\n"\n`),
  );
  repo.git('add', '-A');
  repo.git('commit', '-q', '-m', 'plays');

  const scrape = () => h.http.get('/metrics').set(bearer(TOKEN));

  beforeAll(async () => {
    h = await createHarness(dialect, { executors: { count: 1 }, metricsToken: TOKEN });
    operator = await h.user('operator');
    const project = await h.http
      .post('/v1/projects')
      .set(bearer(operator.token))
      .send({ name: `metrics ${dialect}`, git_url: repo.url, branch: 'main' });
    expect(project.status).toBe(201);
    // One after the other, so `localhost` ends on the failed run's outcome.
    for (const body of [{ playbook: 'ok.yml' }, { playbook: 'drift.yml', check: true }, { playbook: 'fail.yml' }]) {
      const res = await h.http
        .post('/v1/runs')
        .set(bearer(operator.token))
        .send({ ...body, project_id: project.body.id, inventory: LOCAL });
      expect(res.status).toBe(201);
      runs.push(await finished(h, operator.token, res.body.id as string));
    }
    expect(runs.map((r) => r.conclusion)).toEqual(['succeeded', 'succeeded', 'failed']);
    const res = await scrape();
    expect(res.status).toBe(200);
    text = res.text;
  });
  afterAll(async () => {
    await h.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('wants the metrics token: none, a wrong one, another scheme or a sign-in token get 401 problem', async () => {
    for (const headers of [
      {},
      bearer('scrape-me-0123456789-abcdeX'),
      bearer(TOKEN.slice(0, -1)),
      bearer(`${TOKEN}x`),
      { Authorization: `Basic ${Buffer.from(`prometheus:${TOKEN}`).toString('base64')}` },
      { Authorization: TOKEN },
      bearer(operator.token),
      bearer(h.admin.token),
    ]) {
      const res = await h.http.get('/metrics').set(headers);
      expectProblem(res, 401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(res.text).not.toContain('baton_runs');
    }
    const ok = await h.http.get('/metrics').set({ Authorization: `bearer  ${TOKEN}` });
    expect(ok.status).toBe(200);
    expect(ok.headers['content-type']).toMatch(/^text\/plain/);
  });

  it('passes promtool check metrics without a finding', () => {
    expect(checkMetrics(text)).toEqual({ status: 0, output: '' });
    // The check can fail: a gauge named like a counter, as prom-client's default metrics had it.
    const bad = checkMetrics('# HELP x_total x\n# TYPE x_total gauge\nx_total 1\n');
    expect(bad.status).not.toBe(0);
    expect(bad.output).toContain('non-counter metrics should not have "_total" suffix');
  });

  it('counts the finished runs by conclusion and origin, their durations and dispatch waits', () => {
    expect(valueOf(text, 'baton_runs_finished_total', { conclusion: 'succeeded', origin: 'api' })).toBe(2);
    expect(valueOf(text, 'baton_runs_finished_total', { conclusion: 'failed', origin: 'api' })).toBe(1);
    // Every known series is there from the start, at 0.
    expect(valueOf(text, 'baton_runs_finished_total', { conclusion: 'canceled', origin: 'schedule' })).toBe(0);
    expect(valueOf(text, 'baton_run_duration_seconds_count', { conclusion: 'succeeded' })).toBe(2);
    expect(valueOf(text, 'baton_run_duration_seconds_count', { conclusion: 'failed' })).toBe(1);
    expect(valueOf(text, 'baton_run_duration_seconds_bucket', { conclusion: 'failed', le: '+Inf' })).toBe(1);
    const ran = (r: Run) => (Date.parse(r.finished_at!) - Date.parse(r.started_at!)) / 1000;
    expect(valueOf(text, 'baton_run_duration_seconds_sum', { conclusion: 'failed' })).toBeCloseTo(ran(runs[2]!), 3);
    expect(valueOf(text, 'baton_run_dispatch_latency_seconds_count')).toBe(3);
    const waited = runs.reduce((sum, r) => sum + (Date.parse(r.started_at!) - Date.parse(r.created_at)) / 1000, 0);
    expect(valueOf(text, 'baton_run_dispatch_latency_seconds_sum')).toBeCloseTo(waited, 3);
  });

  it('counts every event it stored', async () => {
    const stored = (await h.tdb.db.repos.runs.findMany(runs.map((r) => r.id))).reduce((n, r) => n + r.last_seq, 0);
    expect(stored).toBeGreaterThan(runs.length);
    expect(valueOf(text, 'baton_run_events_ingested_total')).toBe(stored);
  });

  it('reads runs by status, the queue and the executors from the database', () => {
    expect(valueOf(text, 'baton_runs', { status: 'finished' })).toBe(3);
    expect(valueOf(text, 'baton_runs', { status: 'pending' })).toBe(0);
    expect(valueOf(text, 'baton_run_queue_depth')).toBe(0);
    expect(valueOf(text, 'baton_executors', { freshness: 'fresh' })).toBe(1);
    expect(valueOf(text, 'baton_executors', { freshness: 'dead' })).toBe(0);
  });

  it('shows hosts by their last outcome, flaky hosts and drifting resources from the rollups', () => {
    expect(valueOf(text, 'baton_hosts', { last_outcome: 'failed' })).toBe(1);
    for (const last_outcome of ['ok', 'changed', 'unreachable'])
      expect(valueOf(text, 'baton_hosts', { last_outcome })).toBe(0);
    expect(valueOf(text, 'baton_flaky_hosts')).toBe(0);
    expect(valueOf(text, 'baton_drifting_resources')).toBe(1);
  });

  it("shows the event loop's delay, which the dashboard graphs, from its samples since start", () => {
    // Sampled every 100 ms (not every 10: see createMetrics); the runs above took seconds, so there are samples.
    const lag = (figure: string) => valueOf(text, `baton_nodejs_eventloop_lag_${figure}_seconds`) ?? Number.NaN;
    expect(lag('p99')).toBeGreaterThan(0);
    expect(lag('p99')).toBeGreaterThanOrEqual(lag('p50'));
    expect(lag('max')).toBeGreaterThanOrEqual(lag('p99'));
  });

  it('keeps user counts, user names, run ids and host names out', () => {
    expect(text).not.toMatch(/^(# (HELP|TYPE) )?baton_users\b/m);
    for (const personal of [operator.username, 'root', 'localhost', repo.url, ...runs.map((r) => r.id)])
      expect(text).not.toContain(personal);
    // Baton's own labels (not the process metrics') take values from fixed sets only.
    // `user` (AI usage per user, as issue 15 asks) holds user ids, never names: one series per user who used AI.
    const bounded = ['status', 'conclusion', 'origin', 'le', 'freshness', 'last_outcome', 'method', 'route'];
    bounded.push('endpoint', 'outcome', 'direction', 'user');
    for (const s of samples(text).filter((x) => !/^baton_(process|nodejs)_/.test(x.name)))
      for (const label of Object.keys(s.labels))
        expect({ metric: s.name, label, bounded: bounded.includes(label) }).toEqual({
          metric: s.name,
          label,
          bounded: true,
        });
  });
});

describe.each(DIALECTS)('GET /metrics gauges on %s', (dialect) => {
  let h: Harness;
  let server: Server;
  beforeAll(async () => {
    h = await createHarness(dialect);
    server = h.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await h.close();
  });
  const scrape = async () => {
    // No BATON_METRICS_TOKEN: open to anyone, as before.
    const res = await h.http.get('/metrics');
    expect(res.status).toBe(200);
    return res.text;
  };

  it('counts pending runs an executor runs itself as the queue depth', async () => {
    const before = valueOf(await scrape(), 'baton_run_queue_depth')!;
    const repos = h.tdb.db.repos;
    await repos.runs.insert(testRunRow(newId('run'), { submitted_by: h.admin.id }));
    const split = newId('run');
    await repos.runs.insert(testRunRow(split, { kind: 'split', shard_count: 2, submitted_by: h.admin.id }));
    await repos.runs.insert(testRunRow(newId('run'), { kind: 'shard', parent_id: split, shard_index: 0 }));
    await repos.runs.insert(testRunRow(newId('run'), { status: 'held', submitted_by: h.admin.id }));
    // The split itself never goes to an executor, a held run not yet: two more.
    expect(valueOf(await scrape(), 'baton_run_queue_depth')).toBe(before + 2);
  });

  it('counts a run finished without an executor (a cancel), with no duration or dispatch wait', async () => {
    const before = await scrape();
    const run = newId('run');
    await h.tdb.db.repos.runs.insert(testRunRow(run, { origin: 'schedule', submitted_by: h.admin.id }));
    const res = await h.http.post(`/v1/runs/${run}/cancel`).set(bearer(h.admin.token));
    expect(res.status).toBe(200);
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) =>
      valueOf(after, name, labels)! - valueOf(before, name, labels)!;
    expect(delta('baton_runs_finished_total', { conclusion: 'canceled', origin: 'schedule' })).toBe(1);
    expect(delta('baton_runs_finished_total', { conclusion: 'canceled', origin: 'api' })).toBe(0);
    // Its one stored event: the final status.
    expect(delta('baton_run_events_ingested_total')).toBe(1);
    expect(delta('baton_run_duration_seconds_count', { conclusion: 'canceled' })).toBe(0);
    expect(delta('baton_run_dispatch_latency_seconds_count')).toBe(0);
  });

  it('counts a run rejected while held for approval (a decision, not the ingester, finishes it)', async () => {
    const before = await scrape();
    const run = newId('run');
    const submitter = await h.user('operator');
    await h.tdb.db.repos.runs.insert(
      testRunRow(run, { status: 'held', origin: 'trigger', held_by: [], submitted_by: submitter.id }),
    );
    const res = await h.http.post(`/v1/runs/${run}/reject`).set(bearer(h.admin.token)).send({});
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'finished', conclusion: 'rejected' });
    const after = await scrape();
    const delta = (labels: Record<string, string>) =>
      valueOf(after, 'baton_runs_finished_total', labels)! - valueOf(before, 'baton_runs_finished_total', labels)!;
    expect(delta({ conclusion: 'rejected', origin: 'trigger' })).toBe(1);
    expect(delta({ conclusion: 'rejected', origin: 'api' })).toBe(0);
    expect(valueOf(after, 'baton_run_dispatch_latency_seconds_count')).toBe(
      valueOf(before, 'baton_run_dispatch_latency_seconds_count'),
    );
  });

  it('counts executors by the freshness of their last heartbeat', async () => {
    const ago = (s: number) => new Date(Date.now() - s * 1000).toISOString();
    for (const [name, seconds] of [
      ['w-fresh', 1],
      ['w-stale-1', 20],
      ['w-stale-2', 25],
      ['w-dead', 120],
    ] as const) {
      await h.tdb.db.repos.workers.upsert({
        id: newId('wrk'),
        name,
        host: 'worker.example',
        mode: 'daemon',
        labels: [],
        capacity: 1,
        running: [],
        started_at: ago(seconds),
        heartbeat_at: ago(seconds),
        lease_expires_at: ago(seconds),
        paused: null,
      });
    }
    const text = await scrape();
    expect(valueOf(text, 'baton_executors', { freshness: 'fresh' })).toBe(1);
    expect(valueOf(text, 'baton_executors', { freshness: 'stale' })).toBe(2);
    expect(valueOf(text, 'baton_executors', { freshness: 'dead' })).toBe(1);
    expect(text).not.toContain('worker.example');
  });

  it('counts open run event streams', async () => {
    const run = newId('run');
    await h.tdb.db.repos.runs.insert(testRunRow(run, { submitted_by: h.admin.id }));
    const { port } = server.address() as { port: number };
    expect(valueOf(await scrape(), 'baton_sse_subscribers')).toBe(0);
    const streams = [];
    for (let i = 0; i < 2; i++) {
      const s = await openSse(`http://127.0.0.1:${port}/v1/runs/${run}/stream`, bearer(h.admin.token));
      expect(s.status).toBe(200);
      streams.push(s);
    }
    expect(valueOf(await scrape(), 'baton_sse_subscribers')).toBe(2);
    streams[0]!.close();
    await waitFor(async () => valueOf(await scrape(), 'baton_sse_subscribers') === 1, 'one stream closed');
    streams[1]!.close();
    await waitFor(async () => valueOf(await scrape(), 'baton_sse_subscribers') === 0, 'both streams closed');
  });
});

/** Polls `done` (the server sees a client leave only when its socket closes). */
async function waitFor(done: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
