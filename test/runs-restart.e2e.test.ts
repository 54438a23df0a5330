// Restarts of the real `baton serve` (bin/baton) with runs in flight: a pending run is dispatched after the restart,
// a running run whose server died is finished error/worker_lost and never run again, and a graceful stop cancels
// what is still running once the grace period is over. SQLite and PostgreSQL.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import net from 'node:net';
import type { Worker } from '@baton/contracts';
import { openDatabase, type RunRow } from '@baton/db';
import { DIALECTS } from '@baton/db/testing';
import {
  ADMIN_PASSWORD,
  call,
  childrenOf,
  cleanupProcesses,
  freePort,
  freshEnv,
  login,
  run as runBaton,
  type Server,
  serve,
  tempDir,
  waitFor,
} from './support/baton-process.js';

afterAll(cleanupProcesses);

/**
 * The playbooks leave marker files in this machine's temp dir to prove how often they ran; the bubblewrap sandbox
 * would give them a private one, so these tests run unsandboxed (the executor's own tests cover the sandbox).
 */
const UNSANDBOXED = { BATON_SANDBOX: 'off' };

const LOCAL_INVENTORY = 'alpha ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n';

/** A process's environment as NAME=value strings (empty when it is gone). */
function environOf(pid: number): string[] {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

const finishedRun = (s: Server, token: string, id: string) =>
  waitFor(`run ${id} to finish`, async () => {
    const r = await call(s, token, 'GET', `/v1/runs/${id}`);
    return r.body?.status === 'finished' ? r.body : undefined;
  });

/** A run's row read straight from the database (no server holds it meanwhile), for what no API shows while none runs. */
async function storedRun(env: Record<string, string>, id: string): Promise<RunRow | undefined> {
  const db = openDatabase(env.BATON_DATABASE_URL ?? `sqlite:${path.join(env.BATON_DATA_DIR!, 'baton.db')}`);
  try {
    return await db.repos.runs.findById(id);
  } finally {
    await db.close();
  }
}

/**
 * Submits a playbook that marks its start in a file, then sleeps `seconds`, or (`until: 'gate'`) waits until the
 * returned gate file exists; resolves once the task runs.
 */
async function startSleepingRun(
  s: Server,
  token: string,
  seconds: number | { until: 'gate' },
): Promise<{ id: string; marker: string; gate: string }> {
  const dir = tempDir('baton-restart-');
  const marker = path.join(dir, 'started');
  const gate = path.join(dir, 'gate');
  const wait = typeof seconds === 'number' ? `sleep ${seconds}` : `until [ -e ${gate} ]; do sleep 0.2; done`;
  const inv = await call(s, token, 'POST', '/v1/inventories', { name: `local ${marker}`, content: LOCAL_INVENTORY });
  const run = await call(s, token, 'POST', '/v1/runs', {
    playbook: `- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.shell: echo started >> ${marker}; ${wait}\n`,
    inventory_id: inv.body.id,
  });
  expect(run.status).toBe(201);
  await waitFor('the task to start', async () => (fs.existsSync(marker) ? true : undefined));
  return { id: run.body.id, marker, gate };
}

describe.each(DIALECTS)('baton serve restarts with runs in flight on %s', (dialect) => {
  it('dispatches a run left pending by a stopped server after the restart, once', async () => {
    const env = { ...(await freshEnv(dialect)), ...UNSANDBOXED, BATON_ADMIN_PASSWORD: ADMIN_PASSWORD };
    const marker = path.join(tempDir('baton-restart-'), 'ran');
    // No executors: the run stays pending while this server lives.
    const idle = await serve({ ...env, BATON_EXECUTORS: '0' });
    const { token } = await login(idle.base, 'admin', ADMIN_PASSWORD);
    const inv = await call(idle, token!, 'POST', '/v1/inventories', { name: 'local', content: LOCAL_INVENTORY });
    const run = await call(idle, token!, 'POST', '/v1/runs', {
      playbook: `- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.shell: echo ran >> ${marker}\n`,
      inventory_id: inv.body.id,
    });
    expect(run.status).toBe(201);
    expect((await call(idle, token!, 'GET', `/v1/runs/${run.body.id}`)).body.status).toBe('pending');
    await idle.stop();

    const busy = await serve({ ...env, BATON_EXECUTORS: '2' });
    try {
      const again = (await login(busy.base, 'admin', ADMIN_PASSWORD)).token!;
      expect(await finishedRun(busy, again, run.body.id)).toMatchObject({ conclusion: 'succeeded' });
      const workers = await call(busy, again, 'GET', '/v1/workers');
      expect(workers.body).toEqual([expect.objectContaining({ mode: 'embedded', capacity: 2, freshness: 'fresh' })]);
    } finally {
      await busy.stop();
    }
    expect(fs.readFileSync(marker, 'utf8')).toBe('ran\n');
  }, 180_000);

  it('finishes a run whose server was killed mid-run as error/worker_lost and never runs it again', async () => {
    const env = {
      ...(await freshEnv(dialect)),
      ...UNSANDBOXED,
      BATON_ADMIN_PASSWORD: ADMIN_PASSWORD,
      BATON_EXECUTORS: '2',
    };
    const first = await serve(env);
    const { token } = await login(first.base, 'admin', ADMIN_PASSWORD);
    const run = await startSleepingRun(first, token!, 8);
    await first.kill();

    // A server that cannot listen changes nothing: it never reconciles, so the run is still running in the database.
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const blocked = await runBaton(['serve'], {
        ...env,
        BATON_PORT: String((taken.address() as net.AddressInfo).port),
      });
      expect(blocked.code).toBe(2);
      expect(blocked.stderr).toContain('EADDRINUSE');
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
    expect(await storedRun(env, run.id)).toMatchObject({ status: 'running', conclusion: null });

    // One executor: a re-dispatch of the lost run would be queued at start-up, ahead of any run submitted later.
    const second = await serve({ ...env, BATON_EXECUTORS: '1' });
    try {
      const again = (await login(second.base, 'admin', ADMIN_PASSWORD)).token!;
      const lost = (await call(second, again, 'GET', `/v1/runs/${run.id}`)).body;
      expect(lost).toMatchObject({ status: 'finished', conclusion: 'error', reason: 'worker_lost' });
      const events = (
        await call<Array<{ data: Record<string, unknown> }>>(
          second,
          again,
          'GET',
          `/v1/runs/${run.id}/events?kind=status`,
        )
      ).body;
      expect(events[events.length - 1]!.data).toMatchObject({
        status: 'finished',
        conclusion: 'error',
        reason: 'worker_lost',
      });
      // A run submitted now finishes only after a re-dispatched lost run (queued before it, on the only executor)
      // would have started and appended a second line.
      const later = await startSleepingRun(second, again, 0);
      expect(await finishedRun(second, again, later.id)).toMatchObject({ conclusion: 'succeeded' });
      expect(fs.readFileSync(run.marker, 'utf8')).toBe('started\n');
    } finally {
      await second.stop();
    }
  }, 180_000);

  it('on SIGTERM lets a running run go on for the grace period, then cancels it', async () => {
    const env = {
      ...(await freshEnv(dialect)),
      ...UNSANDBOXED,
      BATON_ADMIN_PASSWORD: ADMIN_PASSWORD,
      BATON_EXECUTORS: '1',
      BATON_RUN_GRACE_SECONDS: '1',
    };
    const s = await serve(env);
    const { token } = await login(s.base, 'admin', ADMIN_PASSWORD);
    const run = await startSleepingRun(s, token!, 120);
    // Playbooks run in an executor process of the server's, which holds none of its BATON_* settings.
    const executor = childrenOf(s.pid).find((pid) => environOf(pid).includes('BATON_EXECUTOR_PROCESS=1'));
    expect(executor).toBeDefined();
    expect(environOf(executor!).filter((v) => v.startsWith('BATON_'))).toEqual(['BATON_EXECUTOR_PROCESS=1']);
    const exit = await s.stop();
    expect(exit.code).toBe(0);

    const after = await serve({ ...env, BATON_EXECUTORS: '0' });
    try {
      const again = (await login(after.base, 'admin', ADMIN_PASSWORD)).token!;
      // A shutdown, not a user's cancel: the reason crossed from the server to its executor process.
      expect((await call(after, again, 'GET', `/v1/runs/${run.id}`)).body).toMatchObject({
        status: 'finished',
        conclusion: 'canceled',
        reason: 'shutdown',
      });
    } finally {
      await after.stop();
    }
  }, 180_000);

  it('a signal to the whole process group (Ctrl-C) stops runs gracefully: the executor process waits for the server', async () => {
    const env = {
      ...(await freshEnv(dialect)),
      ...UNSANDBOXED,
      BATON_ADMIN_PASSWORD: ADMIN_PASSWORD,
      BATON_EXECUTORS: '1',
      BATON_RUN_GRACE_SECONDS: '1',
    };
    const s = await serve(env, { ownProcessGroup: true });
    const { token } = await login(s.base, 'admin', ADMIN_PASSWORD);
    const { id } = await startSleepingRun(s, token!, 120);
    process.kill(-s.pid, 'SIGINT');
    const exit = await s.stop();
    expect(exit.code).toBe(0);

    const after = await serve({ ...env, BATON_EXECUTORS: '0' });
    try {
      const again = (await login(after.base, 'admin', ADMIN_PASSWORD)).token!;
      // Not error/executor_error: the executor process outlived the group's SIGINT and the run got its grace period.
      expect((await call(after, again, 'GET', `/v1/runs/${id}`)).body).toMatchObject({
        status: 'finished',
        conclusion: 'canceled',
        reason: 'shutdown',
      });
    } finally {
      await after.stop();
    }
  }, 180_000);

  it('ends the run of an executor process that died as error and removes its run directory at once', async () => {
    const workDir = tempDir('baton-restart-work-');
    const env = {
      ...(await freshEnv(dialect)),
      ...UNSANDBOXED,
      BATON_ADMIN_PASSWORD: ADMIN_PASSWORD,
      BATON_EXECUTORS: '1',
      BATON_WORK_DIR: workDir,
    };
    const s = await serve(env);
    try {
      const { token } = await login(s.base, 'admin', ADMIN_PASSWORD);
      const { id } = await startSleepingRun(s, token!, 120);
      expect(fs.readdirSync(workDir).filter((d) => d.startsWith('baton-run-'))).toHaveLength(1);
      const executor = childrenOf(s.pid).find((pid) => environOf(pid).includes('BATON_EXECUTOR_PROCESS=1'));
      process.kill(executor!, 'SIGKILL');
      expect(await finishedRun(s, token!, id)).toMatchObject({ conclusion: 'error', reason: 'executor_error' });
      await waitFor('the run directory to go', async () =>
        fs.readdirSync(workDir).some((d) => d.startsWith('baton-run-')) ? undefined : true,
      );
      // The next run gets a new executor process.
      const next = await startSleepingRun(s, token!, 0);
      expect(await finishedRun(s, token!, next.id)).toMatchObject({ conclusion: 'succeeded' });
    } finally {
      await s.stop();
    }
  }, 180_000);

  it('lets an executor process go after BATON_EXECUTOR_IDLE_SECONDS without runs, never during one, and starts another for the next run', async () => {
    const env = {
      ...(await freshEnv(dialect)),
      ...UNSANDBOXED,
      BATON_ADMIN_PASSWORD: ADMIN_PASSWORD,
      BATON_EXECUTORS: '1',
      BATON_EXECUTOR_IDLE_SECONDS: '1',
      BATON_LOG_LEVEL: 'debug',
    };
    const s = await serve(env);
    const executor = () => childrenOf(s.pid).find((pid) => environOf(pid).includes('BATON_EXECUTOR_PROCESS=1'));
    try {
      const { token } = await login(s.base, 'admin', ADMIN_PASSWORD);
      // A run three times as long as the idle time keeps the process it started on.
      const long = await startSleepingRun(s, token!, 3);
      const first = executor();
      expect(first).toBeDefined();
      await new Promise((resolve) => setTimeout(resolve, 2000));
      expect(executor()).toBe(first);
      expect(await finishedRun(s, token!, long.id)).toMatchObject({ conclusion: 'succeeded' });
      // Then, idle, it goes: the server is one process.
      await waitFor('the idle executor process to exit', async () => (executor() === undefined ? true : undefined));
      expect(childrenOf(s.pid)).toEqual([]);

      const gated = await startSleepingRun(s, token!, { until: 'gate' });
      const second = executor();
      expect(second).toBeDefined();
      expect(second).not.toBe(first);
      fs.writeFileSync(gated.gate, '');
      expect(await finishedRun(s, token!, gated.id)).toMatchObject({ conclusion: 'succeeded' });
      // Retiring is not a loss: logged at debug, never as the error a crashed executor process is.
      expect(s.output()).toContain('the executor process exited after a time without runs');
      expect(s.output()).not.toMatch(/the executor process exited \(/);
    } finally {
      await s.stop();
    }
  }, 180_000);

  it('leaves a live server’s running run alone when a second server starts on the same database (refused on SQLite)', async () => {
    const fresh = await freshEnv(dialect);
    const dataDir = fresh.BATON_DATA_DIR!;
    const env = { ...fresh, ...UNSANDBOXED, BATON_ADMIN_PASSWORD: ADMIN_PASSWORD, BATON_EXECUTORS: '2' };
    const first = await serve(env);
    try {
      const { token } = await login(first.base, 'admin', ADMIN_PASSWORD);
      // Running until the gate opens, after the second server has looked at it.
      const { id, marker, gate } = await startSleepingRun(first, token!, { until: 'gate' });
      const [executor] = (await call<Worker[]>(first, token!, 'GET', '/v1/workers')).body;
      expect(executor!.name).toMatch(/\/embedded\/\d+$/);
      const firstPid = executor!.name.split('/').pop()!;

      if (dialect === 'sqlite') {
        expect(fs.existsSync(path.join(dataDir, 'baton.db.serve.lock'))).toBe(true);
        const second = await runBaton(['serve'], { ...env, BATON_PORT: String(await freePort()) });
        expect(second.code).toBe(2);
        expect(second.stderr).toContain('another baton serve uses this SQLite database');
        expect(second.stderr).toContain(`pid ${firstPid} on host`);
        expect(second.stderr).toContain(executor!.name);
        expect(second.stderr).not.toMatch(/\n\s+at /);
      } else {
        // PostgreSQL takes several servers: the second one judges the first one's executor alive.
        const second = await serve(env);
        try {
          const again = (await login(second.base, 'admin', ADMIN_PASSWORD)).token!;
          expect((await call(second, again, 'GET', `/v1/runs/${id}`)).body).toMatchObject({ status: 'running' });
          const names = (await call<Worker[]>(second, again, 'GET', '/v1/workers')).body.map((w) => w.name);
          expect(names).toHaveLength(2);
          expect(names).toContain(executor!.name);
        } finally {
          expect((await second.stop()).code).toBe(0);
        }
      }

      fs.writeFileSync(gate, '');
      expect(await finishedRun(first, token!, id)).toMatchObject({ conclusion: 'succeeded', worker: executor!.name });
      const statuses = (
        await call<Array<{ data: Record<string, unknown> }>>(first, token!, 'GET', `/v1/runs/${id}/events?kind=status`)
      ).body;
      expect(statuses.map((e) => e.data.reason)).not.toContain('worker_lost');
      expect(fs.readFileSync(marker, 'utf8')).toBe('started\n');
    } finally {
      expect((await first.stop()).code).toBe(0);
    }
    // A graceful stop takes its lock along: the next server starts.
    if (dialect === 'sqlite') expect(fs.readdirSync(dataDir).filter((f) => f.includes('lock'))).toEqual([]);
  }, 180_000);
});
