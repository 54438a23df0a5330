// A run's launch: started ahead, waiting, then becoming the command it is given, in both sandbox modes; and the one
// launch kept ahead for the next run.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fs from 'node:fs';
import path from 'node:path';
import { probeBwrap, type SandboxSpec } from '../sandbox/sandbox.js';
import { tempDir } from '../testing/index.js';
import { createWarmLaunches, type LaunchCommand, RunLaunch } from './run-launch.js';

const root = tempDir('baton-launch');
beforeAll(async () => {
  expect(await probeBwrap()).toEqual({ available: true });
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const newDir = () => fs.mkdtempSync(path.join(root, 'run-'));
const specFor = (mode: 'off' | 'bwrap', dir: string): SandboxSpec =>
  mode === 'off' ? { mode, hidden: [], writable: [dir] } : { mode, hidden: [root], writable: [dir] };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Everything the launch prints (stderr joined by the launcher) and how it ended. */
function ended(launch: RunLaunch): Promise<{ out: string; code: number | null }> {
  let out = '';
  launch.child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => launch.child.once('close', (code) => resolve({ out, code })));
}

const gone = (pid: number) => {
  try {
    return /^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return true;
  }
};
async function expectGone(pid: number) {
  for (let i = 0; i < 100 && !gone(pid); i++) await sleep(20);
  expect(gone(pid)).toBe(true);
}

/** A shell that reports what it got: directory, arguments, environment, stdin, ignored and blocked signals, policy. */
const REPORT = [
  'printf "cwd=%s\\n" "$PWD"',
  'for a in "$@"; do printf "arg=[%s]\\n" "$a"; done',
  'env',
  'printf "stdin=[%s]\\n" "$(cat)"',
  'grep -E "^Sig(Ign|Blk)" /proc/self/status',
  'chrt -p $$',
].join('; ');

describe.each(['off', 'bwrap'] as const)('a launch (sandbox %s)', (mode) => {
  it('waits for its command, then becomes it with exactly its environment, directory and arguments', async () => {
    const dir = newDir();
    fs.mkdirSync(path.join(dir, 'project'));
    const launch = new RunLaunch(dir, specFor(mode, dir));
    const result = ended(launch);
    await sleep(150);
    expect(launch.waiting).toBe(true);
    const command: LaunchCommand = {
      command: '/bin/sh',
      args: ['-c', REPORT, 'report', 'two words', '', 'ünïcode', 'a=b'],
      env: { PATH: '/usr/bin:/bin:/baton-marker', ONLY: 'this', WITH_EQUALS: 'x=y=z', EMPTY: '', SKIPPED: undefined },
      cwd: path.join(dir, 'project'),
    };
    launch.give(command);
    expect(launch.waiting).toBe(false);
    const { out, code } = await result;
    expect(code).toBe(0);
    expect(out).toContain(`cwd=${path.join(dir, 'project')}\n`);
    expect(out.match(/^arg=.*$/gm)).toEqual(['arg=[two words]', 'arg=[]', 'arg=[ünïcode]', 'arg=[a=b]']);
    const env = out.match(/^[A-Z_]+=.*$/gm)!.filter((l) => !l.startsWith('PWD='));
    expect(env.sort()).toEqual(['EMPTY=', 'ONLY=this', 'PATH=/usr/bin:/bin:/baton-marker', 'WITH_EQUALS=x=y=z']);
    expect(out).toContain('stdin=[]\n');
    // SIGINT is bit 1, SIGTERM bit 14: the sandbox's outer process ignores both, the command must not.
    const ignored = BigInt(`0x${/^SigIgn:\s*([0-9a-f]+)/m.exec(out)![1]}`);
    expect(ignored & 0x4002n).toBe(0n);
    expect(out).toMatch(/^SigBlk:\s*0+$/m);
    expect(out).toMatch(/scheduling policy: SCHED_IDLE/);
  });

  it('refuses a command holding a NUL before sending anything, and still takes a good one', async () => {
    const dir = newDir();
    const launch = new RunLaunch(dir, specFor(mode, dir));
    const result = ended(launch);
    const bad = { command: '/bin/echo', args: ['a\0b'], env: { PATH: '/usr/bin:/bin' }, cwd: dir };
    expect(() => launch.give(bad)).toThrow(TypeError);
    expect(() => launch.give({ ...bad, args: [], env: { X: 'a\0b' } })).toThrow(/NUL/);
    expect(launch.waiting).toBe(true);
    launch.give({ ...bad, args: ['fine'] });
    expect(await result).toEqual({ out: 'fine\n', code: 0 });
  });

  it('says so when the command or its directory is missing', async () => {
    const dir = newDir();
    const missing = new RunLaunch(dir, specFor(mode, dir));
    const missingResult = ended(missing);
    missing.give({ command: '/nonexistent/ansible-playbook', args: [], env: {}, cwd: dir });
    const first = await missingResult;
    expect(first.out).toContain('baton: cannot run /nonexistent/ansible-playbook');
    expect(first.code).not.toBe(0);

    const noDir = new RunLaunch(dir, specFor(mode, dir));
    const noDirResult = ended(noDir);
    noDir.give({ command: '/bin/true', args: [], env: {}, cwd: path.join(dir, 'absent') });
    const second = await noDirResult;
    expect(second.out).toContain('baton: cannot enter the run directory');
    expect(second.code).not.toBe(0);
  });

  it('discarded, its whole group ends and its directory goes when asked', async () => {
    const dir = newDir();
    const launch = new RunLaunch(dir, specFor(mode, dir));
    await sleep(150);
    const pid = launch.child.pid!;
    expect(gone(pid)).toBe(false);
    launch.discard({ removeDir: true });
    expect(launch.waiting).toBe(false);
    await expectGone(pid);
    expect(fs.existsSync(dir)).toBe(false);
  });
});

describe('the launch kept ahead', () => {
  const start = (counter?: { n: number }) => async () => {
    if (counter) counter.n++;
    const dir = newDir();
    return new RunLaunch(dir, specFor('bwrap', dir));
  };

  it('is handed to a run of the same kind, once', async () => {
    const launches = createWarmLaunches();
    launches.prepare('kind-a', start());
    await sleep(100);
    const launch = launches.take('kind-a');
    expect(launch?.waiting).toBe(true);
    expect(launches.take('kind-a')).toBeUndefined();
    launch!.discard({ removeDir: true });
    launches.close();
  });

  it('is discarded, directory and all, when a run of another kind comes', async () => {
    const launches = createWarmLaunches();
    const counter = { n: 0 };
    launches.prepare('kind-a', start(counter));
    launches.prepare('kind-a', start(counter)); // one is starting: no second
    await sleep(100);
    expect(counter.n).toBe(1);
    const dirs = fs.readdirSync(root);
    expect(launches.take('kind-b')).toBeUndefined();
    const removed = dirs.filter((d) => !fs.readdirSync(root).includes(d));
    expect(removed).toHaveLength(1);
    launches.close();
  });

  it('is discarded after its idle time, and not handed out once its process died', async () => {
    const launches = createWarmLaunches({ idleMs: 200 });
    let started: RunLaunch | undefined;
    launches.prepare('kind-a', async () => (started = await start()()));
    await sleep(50);
    const pid = started!.child.pid!;
    await expectGone(pid);
    expect(fs.existsSync(started!.dir)).toBe(false);
    expect(launches.take('kind-a')).toBeUndefined();

    launches.prepare('kind-a', async () => (started = await start()()));
    await sleep(50);
    process.kill(-started!.child.pid!, 'SIGKILL');
    await expectGone(started!.child.pid!);
    await sleep(20);
    expect(launches.take('kind-a')).toBeUndefined();
    expect(fs.existsSync(started!.dir)).toBe(false);
    launches.close();
  });

  it('closed, discards what waits and starts nothing more', async () => {
    const launches = createWarmLaunches();
    let started: RunLaunch | undefined;
    launches.prepare('kind-a', async () => (started = await start()()));
    await sleep(50);
    launches.close();
    await expectGone(started!.child.pid!);
    expect(fs.existsSync(started!.dir)).toBe(false);
    const counter = { n: 0 };
    launches.prepare('kind-a', start(counter));
    expect(counter.n).toBe(0);
    expect(launches.take('kind-a')).toBeUndefined();
  });
});
