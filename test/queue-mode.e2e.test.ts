// Queue mode end to end (issue 5's acceptance): real redis-server (a private one per cluster), PostgreSQL, several
// `baton serve` replicas and `baton worker` daemons from bin/baton, real ansible-playbook on local hosts. Runs, SSE
// on either replica, shards over both workers, cancel, label routing, a worker and an API replica SIGKILLed mid-run,
// Redis restarted mid-queue; and the small deployment: one SQLite replica with a worker, a second one refused.
//
// Four independent clusters run side by side ("lanes"): the cases of one lane run one after another on its
// cluster, the lanes concurrently (it.concurrent), so the slow waits overlap: the lease expiry and the leader's
// sweep after a lost worker, the stream claim after a dead replica, and the sweep after a Redis restart each wait
// about 30 s on a lane of their own or behind short cases, never two of them one after another on one lane.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import type { Run, RunEvent, Worker } from '@baton/contracts';
import { cleanupProcesses, run as runBaton, tempDir, waitFor } from './support/baton-process.js';
import { type QueueCluster, type Replica, startQueueCluster } from './support/queue-cluster.js';
import { createRepo, createRoleRepo, roleRequirement } from '@baton/executor/testing';
import { createRedisRunQueue } from '@baton/queue/redis';

const LOCAL = 'ansible_connection=local ansible_python_interpreter=/usr/bin/python3';
const ONE_HOST = `h1 ${LOCAL}\n`;
const TWO_HOSTS = `h1 ${LOCAL}\nh2 ${LOCAL}\n`;
/** Worker names are unique per test run: the registry is keyed by name. */
const RUN_TAG = crypto.randomBytes(3).toString('hex');
/** A case waits inside its lane for the cases before it: its timeout covers that wait too. */
const CASE_TIMEOUT_MS = 360_000;

const play = (tasks: string): string => `- hosts: all\n  gather_facts: false\n  tasks:\n${tasks}`;
const shell = (cmd: string): string => `    - ansible.builtin.shell: ${cmd}\n`;

const expectGapFree = (seqs: number[]): void => {
  expect(seqs.length).toBeGreaterThan(0);
  expect(seqs).toEqual(seqs.map((_, i) => i + 1));
};

/** A cluster started on first use, and the cases of its lane run one at a time (a failing case does not stop the next). */
function lane(start: () => Promise<QueueCluster>) {
  let cluster: Promise<QueueCluster> | undefined;
  let tail: Promise<unknown> = Promise.resolve();
  const get = () => (cluster ??= start());
  return {
    started: () => cluster,
    run(fn: (c: QueueCluster) => Promise<void>): Promise<void> {
      const mine = tail.then(async () => {
        const c = await get();
        try {
          await fn(c);
        } catch (err) {
          // The processes' last lines say more than a timeout does.
          if (err instanceof Error) err.message += `\n\n${c.logTail()}`;
          throw err;
        }
      });
      tail = mine.catch(() => {});
      return mine;
    },
  };
}

const mainLane = lane(() =>
  startQueueCluster({
    database: 'postgres',
    replicas: 2,
    workers: [
      { name: `m1-${RUN_TAG}`, concurrency: 1 },
      { name: `m2-${RUN_TAG}`, labels: ['gpu'], concurrency: 1 },
    ],
  }),
);
const faultLane = lane(() =>
  startQueueCluster({
    database: 'postgres',
    replicas: 2,
    workers: [
      { name: `f1-${RUN_TAG}`, concurrency: 1 },
      { name: `f2-${RUN_TAG}`, concurrency: 1 },
    ],
  }),
);
const streamLane = lane(() =>
  startQueueCluster({ database: 'postgres', replicas: 2, workers: [{ name: `r1-${RUN_TAG}`, concurrency: 1 }] }),
);
const sqliteLane = lane(() =>
  startQueueCluster({ database: 'sqlite', replicas: 1, workers: [{ name: `s1-${RUN_TAG}`, concurrency: 1 }] }),
);

afterAll(async () => {
  for (const l of [mainLane, faultLane, streamLane, sqliteLane])
    await l.started()?.then(
      (c) => c.close(),
      () => {},
    );
  await cleanupProcesses();
}, 60_000);

/** Inventories by content, one per cluster and content. */
const inventories = new WeakMap<QueueCluster, Map<string, Promise<string>>>();
function inventoryOf(c: QueueCluster, r: Replica, content: string): Promise<string> {
  const mine = inventories.get(c) ?? new Map<string, Promise<string>>();
  inventories.set(c, mine);
  if (!mine.has(content)) mine.set(content, c.inventory(r, content));
  return mine.get(content)!;
}

/** Ids of the event stream's entries that Redis handed to `consumer` and that were not acknowledged yet. */
async function pendingIdsOf(c: QueueCluster, consumer: string): Promise<string[]> {
  const out = await c.redis.cli('xpending', `${c.prefix}:events`, 'ingest', '-', '+', '1000', consumer);
  return out
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => /^\d+-\d+$/.test(l));
}
const pendingOf = async (c: QueueCluster, consumer: string): Promise<number> =>
  (await pendingIdsOf(c, consumer)).length;

/** The seqs of the run events that `consumer` holds unacknowledged. */
async function heldSeqsOf(c: QueueCluster, consumer: string): Promise<number[]> {
  const seqs: number[] = [];
  for (const id of await pendingIdsOf(c, consumer)) {
    const out = await c.redis.cli('xrange', `${c.prefix}:events`, id, id);
    const json = out.split('\n').find((l) => l.trim().startsWith('{'));
    if (json) seqs.push((JSON.parse(json) as RunEvent).seq);
  }
  return seqs;
}

const daemonsOf = async (c: QueueCluster, r: Replica): Promise<Worker[]> => {
  const res = await c.call<Worker[]>(r, 'GET', '/v1/workers');
  expect(res.status).toBe(200);
  return res.body.filter((w) => w.mode === 'daemon');
};

describe('queue mode end to end', () => {
  // Declared lane heads first: Jest starts at most 5 concurrent cases at once, in this order.

  it.concurrent(
    'SQLite: one replica with a worker runs a playbook; a second replica on the same prefix is refused; a killed one restarts at once',
    () =>
      sqliteLane.run(async (c) => {
        const [a] = c.replicas as [Replica];
        const refused = await runBaton(['serve'], c.replicaEnv());
        expect(refused.code).toBe(2);
        expect(refused.stderr).toContain(`runs on SQLite with queue prefix "${c.prefix}"`);
        expect(refused.stderr).toContain(a.consumer);
        expect(refused.stderr).not.toMatch(/\n\s+at /);

        const inv = await inventoryOf(c, a, ONE_HOST);
        const run = await c.submit(a, { playbook: play(shell('echo small-deployment')), inventory_id: inv });
        expect(await c.finished(a, run.id, 90_000)).toMatchObject({ conclusion: 'succeeded', worker: `s1-${RUN_TAG}` });
        expectGapFree((await c.events(a, run.id)).map((e) => e.seq));

        // Killed, then restarted at once (as systemd does): its own fresh announcement does not refuse it.
        const again = await c.restartReplica(a);
        const next = await c.submit(again, { playbook: play(shell('echo after-a-crash')), inventory_id: inv });
        expect(await c.finished(again, next.id, 90_000)).toMatchObject({ conclusion: 'succeeded' });
      }),
    CASE_TIMEOUT_MS,
  );

  it.concurrent(
    'never run twice: the identical job re-added to Redis after the run is not run again, nor one with a tampered nonce',
    () =>
      sqliteLane.run(async (c) => {
        const [a] = c.replicas as [Replica];
        const worker = c.workers[0]!;
        const inv = await inventoryOf(c, a, ONE_HOST);
        const marker = path.join(tempDir('baton-queue-once-'), 'ran');
        const run = await c.submit(a, { playbook: play(shell(`echo ran >> ${marker}`)), inventory_id: inv });
        expect(await c.finished(a, run.id, 90_000)).toMatchObject({ conclusion: 'succeeded' });
        const eventsBefore = await c.events(a, run.id);
        expect(fs.readFileSync(marker, 'utf8')).toBe('ran\n');

        // The job as Redis holds it (BullMQ's hash of the unlabelled queue `runs`), then gone from Redis, as after
        // a restore of an older snapshot: the same payload re-added is a new job to BullMQ.
        const jobKey = `${c.prefix}:runs:${run.id}`;
        const data = JSON.parse(await c.redis.cli('hget', jobKey, 'data')) as { runId: string; bundle: string };
        expect(data.runId).toBe(run.id);
        const forget = async () => {
          await c.redis.cli('del', jobKey);
          await c.redis.cli('zrem', `${c.prefix}:runs:completed`, run.id);
          await c.redis.cli('zrem', `${c.prefix}:runs:failed`, run.id);
        };
        const foreign = createRedisRunQueue({ redisUrl: c.redis.url, prefix: c.prefix });
        const reAdd = async (bundle: string, logMatch: RegExp) => {
          await forget();
          await foreign.enqueue({ runId: run.id, bundle });
          await waitFor(
            `the worker to drop the re-added job of ${run.id}`,
            async () =>
              worker
                .output()
                .split('\n')
                .some((l) => l.includes(run.id) && logMatch.test(l))
                ? true
                : undefined,
            60_000,
          );
          await waitFor(
            'the re-added job to leave the queue',
            async () => ((await c.redis.cli('zscore', `${c.prefix}:runs:completed`, run.id)).trim() ? true : undefined),
            30_000,
          );
        };
        try {
          await reAdd(data.bundle, /already_claimed/);
          // A nonce changed by the writer (to escape the claim) breaks the seal: refused before any claim.
          const parts = data.bundle.split('.');
          const otherNonce = crypto.randomBytes(16).toString('base64url');
          await reAdd([parts[0], otherNonce, ...parts.slice(2)].join('.'), /bad_bundle/);
        } finally {
          await foreign.close();
        }

        // ansible-playbook ran once: one line in the marker, no new event, the run's outcome unchanged.
        expect(fs.readFileSync(marker, 'utf8')).toBe('ran\n');
        expect(
          worker
            .output()
            .split('\n')
            .filter((l) => l.includes(run.id) && l.includes('ansible-playbook started')),
        ).toHaveLength(1);
        expect(await c.events(a, run.id)).toEqual(eventsBefore);
        expect((await c.call(a, 'GET', `/v1/runs/${run.id}`)).body).toMatchObject({
          status: 'finished',
          conclusion: 'succeeded',
        });
      }),
    CASE_TIMEOUT_MS,
  );

  it.concurrent(
    'a worker SIGKILLed mid-run: its run ends error/worker_lost, is never started again, the other worker goes on',
    () =>
      faultLane.run(async (c) => {
        const [a, b] = c.replicas as [Replica, Replica];
        const inv = await inventoryOf(c, a, ONE_HOST);
        const marker = path.join(tempDir('baton-queue-'), 'started');
        const run = await c.submit(a, {
          playbook: play(shell(`echo started >> ${marker}; sleep 40`)),
          inventory_id: inv,
        });
        await waitFor('the task to start', async () => (fs.existsSync(marker) ? true : undefined), 60_000);
        const running = await c.waitForRun(
          a,
          run.id,
          (r) => r.status === 'running' && r.worker !== null,
          'to show its worker',
        );
        const victim = c.workers.find((w) => w.name === running.worker);
        expect(victim).toBeDefined();
        const survivor = c.workers.find((w) => w !== victim)!;
        await victim!.kill({ withPlaybooks: true });

        // The lease (30 s) expires, then the leader's sweep (every 30 s) finishes it.
        const lost = await c.waitForRun(b, run.id, (r) => r.status === 'finished', 'to be finished as lost', 90_000);
        expect(lost).toMatchObject({ conclusion: 'error', reason: 'worker_lost', worker: victim!.name });

        // The survivor takes new runs, and had the lost one been handed out again it would have run by then.
        const next = await c.submit(b, { playbook: play(shell('echo next')), inventory_id: inv });
        expect(await c.finished(b, next.id, 60_000)).toMatchObject({ conclusion: 'succeeded', worker: survivor.name });
        const statuses = await c.events(b, run.id, '?kind=status');
        expect(statuses.filter((e) => e.data.status === 'running')).toHaveLength(1);
        expect(statuses[statuses.length - 1]!.data).toMatchObject({
          status: 'finished',
          conclusion: 'error',
          reason: 'worker_lost',
        });
        expect(await c.events(b, run.id, '?kind=playbook_on_start')).toHaveLength(1);
        expect(fs.readFileSync(marker, 'utf8')).toBe('started\n');
      }),
    CASE_TIMEOUT_MS,
  );

  it.concurrent(
    'a run submitted to replica A succeeds on a worker; SSE and GET on replica B; both daemons listed',
    () =>
      mainLane.run(async (c) => {
        const [a, b] = c.replicas as [Replica, Replica];
        // Workers start side by side: tell them by their labels, not by the order they came up in.
        const w1 = c.workers.find((w) => w.labels.length === 0);
        const w2 = c.workers.find((w) => w.labels.includes('gpu'));
        const inv = await inventoryOf(c, a, ONE_HOST);
        const run = await c.submit(a, { playbook: play(shell('echo hello-from-a-worker')), inventory_id: inv });
        const stream = await c.sse(b, run.id);
        expect(stream.status).toBe(200);
        await stream.until((s) => s.ended(), 'the end of the stream on replica B', 90_000);
        const seqs = stream.seqs();
        expectGapFree(seqs);
        expect(stream.frames.filter((f) => f.event === 'end')).toHaveLength(1);

        const done = (await c.call(b, 'GET', `/v1/runs/${run.id}`)).body;
        expect(done).toMatchObject({ status: 'finished', conclusion: 'succeeded', last_seq: seqs[seqs.length - 1] });
        expect([w1!.name, w2!.name]).toContain(done.worker);
        expect((await c.call(b, 'GET', `/v1/runs/${run.id}/logs`)).status).toBe(200);

        const daemons = await daemonsOf(c, b);
        expect(daemons).toEqual(
          expect.arrayContaining([
            expect.objectContaining({ name: w1!.name, mode: 'daemon', labels: [], capacity: 1, freshness: 'fresh' }),
            expect.objectContaining({
              name: w2!.name,
              mode: 'daemon',
              labels: ['gpu'],
              capacity: 1,
              freshness: 'fresh',
            }),
          ]),
        );
      }),
    CASE_TIMEOUT_MS,
  );

  it.concurrent(
    "a project's Galaxy requirements are installed by the worker that runs it, into that worker's own cache",
    () =>
      mainLane.run(async (c) => {
        const [a, b] = c.replicas as [Replica, Replica];
        const repos = tempDir('baton-queue-galaxy-');
        const role = createRoleRepo(repos, 'queue_role', 'hello from a worker-installed role');
        const repo = createRepo(repos, 'project');
        fs.mkdirSync(path.join(repo.dir, 'roles'));
        fs.writeFileSync(path.join(repo.dir, 'roles/requirements.yml'), roleRequirement(role));
        fs.writeFileSync(
          path.join(repo.dir, 'site.yml'),
          '- hosts: all\n  gather_facts: false\n  roles: [queue_role]\n',
        );
        repo.git('add', '-A');
        repo.git('commit', '-q', '-m', 'requirements');
        const project = await c.call(a, 'POST', '/v1/projects', { name: `galaxy ${RUN_TAG}`, git_url: repo.url });
        expect(project.status).toBe(201);
        const inv = await inventoryOf(c, a, ONE_HOST);
        const submitted = await c.submit(a, { project_id: project.body.id, playbook: 'site.yml', inventory_id: inv });
        const done = await c.finished(b, submitted.id, 120_000);
        expect(done).toMatchObject({ conclusion: 'succeeded' });
        const events = (await c.call<RunEvent[]>(b, 'GET', `/v1/runs/${submitted.id}/events?kind=log`)).body;
        const log = events
          .filter((e) => e.kind === 'log')
          .map((e) => String(e.data.text))
          .join('');
        expect(log).toMatch(/baton: installing requirements \(roles\/requirements\.yml\)/);
        expect(log).toMatch(/hello from a worker-installed role/);
        // The worker that ran it holds the install, beside its run directories.
        const worker = c.workers.find((w) => w.name === done.worker)!;
        const cached = path.join(worker.workDir, 'baton-requirements', project.body.id as string);
        expect(fs.readdirSync(cached).filter((n) => !n.includes('.tmp-'))).toHaveLength(1);
      }),
    CASE_TIMEOUT_MS,
  );

  it.concurrent(
    "an API replica SIGKILLed while it holds a streaming run's events: the run succeeds with every event stored",
    () =>
      streamLane.run(async (c) => {
        const [a, b] = c.replicas as [Replica, Replica];
        const inv = await inventoryOf(c, a, ONE_HOST);
        // Events stream steadily (a retry about every 0.1 s, more under load) until the test opens the gate, after B
        // is dead: B can be caught holding entries however loaded the machine is, and the run then ends in seconds.
        const gate = path.join(tempDir('baton-queue-gate-'), 'open');
        const tasks =
          `    - ansible.builtin.debug: { msg: "before" }\n`.repeat(3) +
          `    - ansible.builtin.debug: { msg: "{{ lookup('pipe', 'sleep 0.1') }}" }\n` +
          `      until: lookup('pipe', 'test -e ${gate} && echo open || echo shut') == 'open'\n` +
          `      retries: 100000\n` +
          `      delay: 0\n` +
          `    - ansible.builtin.debug: { msg: "after" }\n`.repeat(3);
        const run = await c.submit(a, { playbook: play(tasks), inventory_id: inv });
        const stream = await c.sse(a, run.id);
        // The retries have begun: from here on events arrive steadily until the gate opens.
        await waitFor(
          'the run to stream its retries',
          async () => ((await c.events(a, run.id)).some((e) => e.kind === 'runner_retry') ? true : undefined),
          90_000,
        );

        // Frozen, B still takes its share of the stream from Redis but never stores it: then it dies. (An entry it
        // stored but had not acknowledged when frozen does not count: the run would not need it back.)
        // B takes an entry only if it was blocked on a read when frozen (a read blocks for at most 1 s) and an entry
        // came to it rather than to A within that time: an attempt lasts until B holds one or the stream has moved on
        // by a few events without it (on a loaded machine events come seconds apart). Ten attempts missed once.
        let unstored: number[] = [];
        const lastStored = async () => Math.max(0, ...(await c.events(a, run.id)).map((e) => e.seq));
        for (let attempt = 0; attempt < 40 && unstored.length === 0; attempt++) {
          b.pause();
          const from = await lastStored();
          for (let waited = 0; waited < 20_000 && unstored.length === 0; waited += 300) {
            await new Promise((r) => setTimeout(r, 300));
            const events = await c.events(a, run.id);
            const stored = new Set(events.map((e) => e.seq));
            unstored = (await heldSeqsOf(c, b.consumer)).filter((seq) => !stored.has(seq));
            if (Math.max(0, ...stored) >= from + 5) break;
          }
          if (unstored.length === 0) b.resume();
        }
        expect(unstored.length).toBeGreaterThan(0);
        await b.kill();
        fs.writeFileSync(gate, '');

        // A claims B's entries once they are 30 s idle: the run's end waits for them.
        const done = await c.finished(a, run.id, 120_000);
        expect(done).toMatchObject({ conclusion: 'succeeded' });
        const events = await c.events(a, run.id);
        expectGapFree(events.map((e) => e.seq));
        expect(events.length).toBe(done.last_seq);
        expect(events.filter((e) => e.kind === 'runner_on_ok')).toHaveLength(7);
        expect(events.filter((e) => e.kind === 'runner_retry').length).toBeGreaterThan(0);
        expect(events[events.length - 1]).toMatchObject({
          kind: 'status',
          data: { status: 'finished', conclusion: 'succeeded' },
        });
        expect(await pendingOf(c, b.consumer)).toBe(0);
        // The live stream on A relayed them all in order too, across the gap.
        await stream.until((s) => s.ended(), 'the end of the stream on replica A', 30_000);
        expectGapFree(stream.seqs());
        expect(stream.seqs()).toHaveLength(events.length);

        // The leader's sweep then removes B's consumer from the group (it holds nothing any more); A's stays.
        const consumers = async (): Promise<string[]> =>
          (await c.redis.cli('xinfo', 'consumers', `${c.prefix}:events`, 'ingest'))
            .split('\n')
            .map((line, i, lines) => (lines[i - 1] === 'name' ? line.trim() : ''))
            .filter(Boolean);
        await waitFor(
          "B's stream consumer to be removed",
          async () => (!(await consumers()).includes(b.consumer) ? true : undefined),
          180_000,
        );
        expect(await consumers()).toContain(a.consumer);
      }),
    CASE_TIMEOUT_MS,
  );

  it.concurrent(
    'shards spread over both workers: a 2-shard split on 2 hosts runs one shard on each',
    () =>
      mainLane.run(async (c) => {
        const [a, b] = c.replicas as [Replica, Replica];
        const [w1, w2] = c.workers;
        const inv = await inventoryOf(c, a, TWO_HOSTS);
        // Each worker runs one at a time and a shard takes ~3 s: the second shard cannot wait for the first worker.
        const split = await c.submit(a, { playbook: play(shell('sleep 3')), inventory_id: inv, shards: 2 });
        expect(split).toMatchObject({ kind: 'split', shard_count: 2 });
        expect(await c.finished(b, split.id, 90_000)).toMatchObject({ conclusion: 'succeeded' });
        const shards = (await c.call<Run[]>(b, 'GET', `/v1/runs/${split.id}/shards`)).body;
        expect(shards.map((s) => [s.shard_index, s.hosts, s.conclusion])).toEqual([
          [0, ['h1'], 'succeeded'],
          [1, ['h2'], 'succeeded'],
        ]);
        expect(shards.map((s) => s.worker).sort()).toEqual([w1!.name, w2!.name].sort());
      }),
    CASE_TIMEOUT_MS,
  );

  it.concurrent(
    'a pipeline moves on where worker daemons finish its steps: a step, then a split step over both workers',
    () =>
      mainLane.run(async (c) => {
        const [a, b] = c.replicas as [Replica, Replica];
        const inv = await inventoryOf(c, a, TWO_HOSTS);
        const res = await c.call<Run>(a, 'POST', '/v1/pipelines', {
          inventory_id: inv,
          steps: [
            { name: 'first', playbook: play(shell('echo first-step')) },
            { name: 'split', playbook: play(shell('sleep 2')), shards: 2 },
          ],
        });
        expect(res.status).toBe(201);
        const done = await c.finished(b, res.body.id, 120_000);
        expect(done).toMatchObject({ kind: 'pipeline', conclusion: 'succeeded' });
        const steps = (await c.call<Run[]>(b, 'GET', `/v1/runs/${done.id}/steps`)).body;
        expect(steps.map((s) => [s.step_name, s.conclusion])).toEqual([
          ['first', 'succeeded'],
          ['split', 'succeeded'],
        ]);
        const shards = (await c.call<Run[]>(b, 'GET', `/v1/runs/${steps[1]!.id}/shards`)).body;
        expect(shards.every((s) => s.started_at! >= steps[0]!.finished_at!)).toBe(true);
        expect(shards.map((s) => s.conclusion)).toEqual(['succeeded', 'succeeded']);
      }),
    CASE_TIMEOUT_MS,
  );

  it.concurrent(
    'cancel of a running run: finished/canceled within 15 s, and the worker is free again',
    () =>
      mainLane.run(async (c) => {
        const [a, b] = c.replicas as [Replica, Replica];
        const gpu = c.workers.find((w) => w.labels.includes('gpu'))!;
        const inv = await inventoryOf(c, a, ONE_HOST);
        const run = await c.submit(a, {
          playbook: play('    - ansible.builtin.command: sleep 60\n'),
          inventory_id: inv,
          labels: ['gpu'],
        });
        await waitFor(
          'the task to start',
          async () => ((await c.events(a, run.id, '?kind=playbook_on_task_start')).length ? true : undefined),
          60_000,
        );
        // Through the other replica: the cancel must reach the worker that holds the job.
        const cancel = await c.call(b, 'POST', `/v1/runs/${run.id}/cancel`);
        expect(cancel.status).toBe(202);
        expect(await c.finished(a, run.id, 15_000)).toMatchObject({ conclusion: 'canceled', worker: gpu.name });

        await waitFor(
          'the worker to hold no run',
          async () => {
            const w = (await daemonsOf(c, a)).find((d) => d.name === gpu.name);
            return w && w.running_count === 0 ? true : undefined;
          },
          30_000,
        );
        const next = await c.submit(a, {
          playbook: play(shell('echo free-again')),
          inventory_id: inv,
          labels: ['gpu'],
        });
        expect(await c.finished(a, next.id, 60_000)).toMatchObject({ conclusion: 'succeeded', worker: gpu.name });
      }),
    CASE_TIMEOUT_MS,
  );

  it.concurrent(
    'label routing: gpu runs go only to the gpu worker; a run no worker can take stays pending and cancels at once',
    () =>
      mainLane.run(async (c) => {
        const [a, b] = c.replicas as [Replica, Replica];
        const gpu = c.workers.find((w) => w.labels.includes('gpu'))!;
        const inv = await inventoryOf(c, a, ONE_HOST);
        const nowhere = await c.submit(a, {
          playbook: play(shell('echo never')),
          inventory_id: inv,
          labels: ['nowhere'],
        });
        // Three at once for a worker that runs one at a time, while the other worker idles: it must not help.
        const gpuRuns = await Promise.all(
          [1, 2, 3].map((n) =>
            c.submit(a, { playbook: play(shell(`echo gpu-${n}; sleep 1`)), inventory_id: inv, labels: ['gpu'] }),
          ),
        );
        const gpuDone = await Promise.all(gpuRuns.map((r) => c.finished(b, r.id, 90_000)));

        // Those took seconds: the run that asks for a label no worker has is still waiting.
        expect((await c.call(b, 'GET', `/v1/runs/${nowhere.id}`)).body).toMatchObject({
          status: 'pending',
          worker: null,
        });
        const cancel = await c.call(b, 'POST', `/v1/runs/${nowhere.id}/cancel`);
        expect(cancel.status).toBe(200);
        expect(cancel.body).toMatchObject({ status: 'finished', conclusion: 'canceled' });
        expect(await c.events(a, nowhere.id, '?kind=playbook_on_start')).toHaveLength(0);

        const outcome = (r: Run) => ({ conclusion: r.conclusion, reason: r.reason, worker: r.worker });
        expect(gpuDone.map(outcome)).toEqual(
          gpuDone.map(() => ({ conclusion: 'succeeded', reason: null, worker: gpu.name })),
        );
      }),
    CASE_TIMEOUT_MS,
  );

  it.concurrent(
    'Redis restarted mid-queue: every pending run still runs and succeeds',
    () =>
      faultLane.run(async (c) => {
        const [a, b] = c.replicas as [Replica, Replica];
        const inv = await inventoryOf(c, a, ONE_HOST);
        // No worker has the label yet: the runs wait in the queue that the restart wipes.
        const queued = await Promise.all(
          [1, 2, 3].map((n) =>
            c.submit(a, { playbook: play(shell(`echo queued-${n}`)), inventory_id: inv, labels: ['late'] }),
          ),
        );
        for (const r of queued)
          expect((await c.call(b, 'GET', `/v1/runs/${r.id}`)).body).toMatchObject({ status: 'pending' });

        await c.redis.stop('kill');
        // A replica that cannot reach Redis is not ready (it can neither dispatch nor ingest), and says why.
        const notReady = await fetch(`${a.base}/readyz`);
        expect(notReady.status).toBe(503);
        expect(((await notReady.json()) as { detail: string }).detail).toBe('Redis unreachable');
        await c.redis.start();
        // One slot for three runs: each waits for the one before it.
        const late = await c.startWorker({ name: `f3-${RUN_TAG}`, labels: ['late'], concurrency: 1 });

        // The leader's sweep (every 30 s) puts what the empty Redis forgot back into the queue.
        for (const r of queued)
          expect(await c.finished(b, r.id, 120_000)).toMatchObject({ conclusion: 'succeeded', worker: late.name });
        expectGapFree((await c.events(a, queued[0]!.id)).map((e: RunEvent) => e.seq));
        // The workers that lived through the restart take new runs too.
        const after = await c.submit(b, { playbook: play(shell('echo after-restart')), inventory_id: inv });
        expect(await c.finished(a, after.id, 90_000)).toMatchObject({ conclusion: 'succeeded' });
      }),
    CASE_TIMEOUT_MS,
  );
});
