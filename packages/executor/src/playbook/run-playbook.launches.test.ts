// runPlaybook with a launch kept ahead: the next run starts in the process and directory made for it, and nothing
// of a launch outlives its use, a cancel, another kind of run or the pool's close.
import { afterAll, describe, expect, it } from '@jest/globals';
import fs from 'node:fs';
import path from 'node:path';
import type { RunBundle } from '@baton/contracts';
import { createRepo, inlineBundle, play, runCollecting, tempDir } from '../testing/index.js';
import { createWarmLaunches, type WarmLaunches } from './run-launch.js';
import type { RunPlaybookOptions } from './run-playbook.js';

const workRoot = tempDir('baton-playbook-launches');
afterAll(() => fs.rmSync(workRoot, { recursive: true, force: true }));

const runDirs = () => fs.readdirSync(workRoot).filter((n) => n.startsWith('baton-run-'));
/** The process group recorded for a run directory (the launch waiting in it). */
const recordedGroup = (dir: string) =>
  (JSON.parse(fs.readFileSync(path.join(workRoot, dir, 'pids.json'), 'utf8')) as { ansible_pgid?: number })
    .ansible_pgid;
const groupAlive = (pgid: number) => {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
};
/** The only run directory's waiting launch, once it is started and leads its process group. */
async function waitingLaunch(): Promise<{ dir: string; group: number }> {
  for (let i = 0; i < 100; i++) {
    const dirs = runDirs();
    const group = dirs.length === 1 ? recordedGroup(dirs[0]!) : undefined;
    if (group !== undefined && groupAlive(group)) return { dir: dirs[0]!, group };
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no launch waits: ${JSON.stringify(runDirs())}`);
}
async function expectGroupGone(pgid: number) {
  for (let i = 0; i < 100 && groupAlive(pgid); i++) await new Promise((r) => setTimeout(r, 20));
  expect(groupAlive(pgid)).toBe(false);
}

/** Processes whose working directory lies under this file's work root (a launch works in its run directory). */
const processesInWorkRoot = () =>
  fs.readdirSync('/proc').filter((pid) => {
    try {
      return /^\d+$/.test(pid) && fs.readlinkSync(`/proc/${pid}/cwd`).startsWith(workRoot);
    } catch {
      return false;
    }
  });

async function runWith(launches: WarmLaunches, bundle: RunBundle, opts: Partial<RunPlaybookOptions> = {}) {
  let spawned: { pid: number; warm: boolean } | undefined;
  const result = await runCollecting(bundle, {
    workRoot,
    sandbox: { mode: 'bwrap', hidden: [] },
    launches,
    onSpawn: (pid, _at, warm) => (spawned = { pid, warm }),
    ...opts,
  });
  return { ...result, spawned };
}

/** Runs `test` with a pool where a first run left a launch waiting; the pool is closed whatever happens. */
async function withWaitingLaunch(
  test: (launches: WarmLaunches, waiting: { dir: string; group: number }) => Promise<void>,
) {
  const launches = createWarmLaunches();
  try {
    await runWith(launches, inlineBundle(play('    - debug: msg=one\n')));
    await test(launches, await waitingLaunch());
  } finally {
    launches.close();
  }
}

describe('runs with a launch kept ahead', () => {
  it('start the next run in the launch waiting for it, then keep one ready again', async () => {
    const launches = createWarmLaunches();
    try {
      const bundle = inlineBundle(play('    - debug: msg=hello-from-ahead\n    - command: echo changed\n'));
      const first = await runWith(launches, bundle);
      expect(first.outcome.conclusion).toBe('succeeded');
      expect(first.spawned?.warm).toBe(false);
      // The only directory left is the next run's, with its waiting launch recorded for a crash's clean-up.
      const { dir: waitingDir, group: waitingGroup } = await waitingLaunch();

      const second = await runWith(launches, bundle);
      expect(second.spawned).toEqual({ pid: waitingGroup, warm: true });
      expect(second.outcome).toMatchObject({ exitCode: 0, conclusion: 'succeeded' });
      expect(second.outcome.stats).toEqual(first.outcome.stats);
      expect(second.log).toContain('hello-from-ahead');
      // The same events (log chunks split as output arrives: not compared).
      const ansibleKinds = (kinds: string[]) => kinds.filter((k) => k !== 'log');
      expect(ansibleKinds(second.kinds)).toEqual(ansibleKinds(first.kinds));
      // Its directory went with it; a new launch waits in a new one.
      const { dir: nextDir, group: nextGroup } = await waitingLaunch();
      expect(nextDir).not.toBe(waitingDir);
      launches.close();
      await expectGroupGone(nextGroup);
      expect(runDirs()).toEqual([]);
    } finally {
      launches.close();
    }
  }, 60_000);

  it("ansible-playbook runs in the launch's own Python (loaded ahead), in a run's own launch too; an env credential's shell is exec'd; BATON_RUN_PRELOAD=false execs it always", async () => {
    // A lookup runs in a fork of ansible's controller: its parent's command line is the controller's.
    const controller = play(
      `    - debug: msg="controller=[{{ lookup('pipe', 'ps -ww -o args= -p $PPID | head -c 400') }}]"\n`,
    );
    const commandLine = (log: string) => /controller=\[(.*?)\s*\]/.exec(log)?.[1];
    const launches = createWarmLaunches();
    try {
      const own = await runWith(launches, inlineBundle(controller));
      expect(own.spawned?.warm).toBe(false);
      expect(commandLine(own.log)).toMatch(
        /^\S*python[0-9.]* \S*\/launcher\/python_launch\.py \S*\/ansible-playbook 0$/,
      );
      await waitingLaunch();
      const ahead = await runWith(launches, inlineBundle(controller));
      expect(ahead.spawned?.warm).toBe(true);
      expect(ahead.outcome.conclusion).toBe('succeeded');
      expect(commandLine(ahead.log)).toMatch(
        /^\S*python[0-9.]* \S*\/launcher\/python_launch\.py \S*\/ansible-playbook 1$/,
      );
      // An env credential's variables come through /bin/sh, which then execs ansible-playbook.
      const withEnv = await runWith(
        launches,
        inlineBundle(controller, { credentials: [{ type: 'env', inputs: { variables: { MY_TOKEN: 'x' } } }] }),
      );
      expect(withEnv.outcome.conclusion).toBe('succeeded');
      expect(commandLine(withEnv.log)).toMatch(/^\S*python[0-9.]* \S*ansible-playbook -i /);
    } finally {
      launches.close();
    }
    // BATON_RUN_PRELOAD=false: a fresh ansible-playbook, in a launch of its own and in one kept ahead.
    const fresh = createWarmLaunches();
    try {
      for (const warm of [false, true]) {
        if (warm) await waitingLaunch();
        const run = await runWith(fresh, inlineBundle(controller), { preloadPython: false });
        expect(run.spawned?.warm).toBe(warm);
        expect(commandLine(run.log)).toMatch(/^\S*python[0-9.]* \S*ansible-playbook -i /);
      }
    } finally {
      fresh.close();
    }
  }, 60_000);

  it('a project run starts in it too, in the checkout made after the launch started', async () => {
    const repo = createRepo(tempDir('baton-launches-repo'));
    const commit = repo.commitFiles({ 'plays/hello.yml': play('    - debug: msg=from-the-project\n') });
    const project: RunBundle = {
      ...inlineBundle(''),
      playbook: { source: 'project', path: 'plays/hello.yml', git: { url: repo.url, commit } },
    };
    try {
      await withWaitingLaunch(async (launches, { group }) => {
        const run = await runWith(launches, project);
        expect(run.spawned).toEqual({ pid: group, warm: true });
        expect(run.outcome.conclusion).toBe('succeeded');
        expect(run.log).toContain('from-the-project');
        // Events name the playbook relative to the project, as in a run that started its own launch.
        expect(run.events.find((e) => e.kind === 'playbook_on_start')!.data.playbook).toBe('plays/hello.yml');
      });
    } finally {
      fs.rmSync(repo.dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('a command that cannot be handed over (a NUL in it) ends the run executor_error and leaves no launch waiting', async () => {
    await withWaitingLaunch(async (launches) => {
      const nul = inlineBundle(play('    - debug: msg=two\n'), { limit: 'local\0host' });
      // In the launch made ahead, then (another sandbox) in one of its own.
      for (const sandbox of [undefined, { mode: 'off' as const, hidden: [] }]) {
        const bad = await runWith(launches, nul, sandbox ? { sandbox } : {});
        expect(bad.outcome).toMatchObject({ conclusion: 'error', reason: 'executor_error' });
        expect(bad.log).toContain('NUL character');
        expect(bad.spawned).toBeUndefined();
      }
      launches.close();
      for (let i = 0; i < 100 && processesInWorkRoot().length > 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(processesInWorkRoot()).toEqual([]);
      expect(runDirs()).toEqual([]);
    });
  }, 60_000);

  it('stopped by a cancel before ansible started: the waiting launch goes with the run', async () => {
    await withWaitingLaunch(async (launches, { group: waitingGroup }) => {
      const controller = new AbortController();
      controller.abort();
      const canceled = await runWith(launches, inlineBundle(play('    - debug: msg=two\n')), {
        signal: controller.signal,
      });
      expect(canceled.outcome.conclusion).toBe('canceled');
      expect(canceled.spawned).toBeUndefined();
      await expectGroupGone(waitingGroup);
      expect(runDirs().map(recordedGroup)).not.toContain(waitingGroup);
    });
  }, 60_000);

  it('a run of another kind (another sandbox) starts its own, and the one waiting goes', async () => {
    await withWaitingLaunch(async (launches, { group: waitingGroup }) => {
      const unsandboxed = await runWith(launches, inlineBundle(play('    - debug: msg=two\n')), {
        sandbox: { mode: 'off', hidden: [] },
      });
      expect(unsandboxed.outcome.conclusion).toBe('succeeded');
      expect(unsandboxed.spawned?.warm).toBe(false);
      await expectGroupGone(waitingGroup);
    });
  }, 60_000);
});
