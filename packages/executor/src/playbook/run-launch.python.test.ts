// The Python waiter (launcher/python_launch.py): a launch for a Python script loads libraries ahead, then runs that
// script in its own process when the run's environment allows, and otherwise execs the command like the perl waiter.
// A stand-in script reports what it sees; the interpreter is ansible-playbook's own.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fs from 'node:fs';
import path from 'node:path';
import { probeBwrap, type SandboxSpec } from '../sandbox/sandbox.js';
import { tempDir } from '../testing/index.js';
import { ansiblePython } from './ansible-python.js';
import { PYTHON_LAUNCHER } from './package-files.js';
import { ansiblePythonLaunch, type LaunchCommand, type PythonLaunch, RunLaunch } from './run-launch.js';

const root = tempDir('baton-python-launch');
const bin = path.join(root, 'bin');
const ansible = ansiblePythonLaunch({ PATH: process.env.PATH! }, true);
beforeAll(async () => {
  expect(await probeBwrap()).toEqual({ available: true });
  expect(ansible).toBeDefined();
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** Reports, as JSON, what a script run by `python3 script` would see (checked first: which libraries are loaded). */
const REPORT_SCRIPT = `import sys
preloaded = [name for name in ('jinja2', 'yaml') if name in sys.modules]
import json, os, signal, tempfile, time
status = open('/proc/self/status').read()
ignored = int([l for l in status.splitlines() if l.startswith('SigIgn:')][0].split()[1], 16)
print(json.dumps({
  'preloaded': preloaded, 'argv': sys.argv, 'path0': sys.path[0], 'cwd': os.getcwd(), 'env': dict(os.environ),
  'cmdline': open('/proc/self/cmdline', 'rb').read().decode().split('\\0')[:-1], 'name': __name__,
  'file': __file__, 'tempdir': tempfile.gettempdir(), 'stdin': sys.stdin.read(),
  'int_ignored': bool(ignored & (1 << (signal.SIGINT - 1))),
  'term_ignored': bool(ignored & (1 << (signal.SIGTERM - 1))),
  'pipe_ignored': bool(ignored & (1 << (signal.SIGPIPE - 1))),
}))
if 'exit-3' in sys.argv:
  sys.exit(3)
if 'wait' in sys.argv:
  try:
    print('waiting', flush=True)
    time.sleep(30)
  except KeyboardInterrupt:
    print('interrupted')
    sys.exit(130)
`;
fs.mkdirSync(bin, { recursive: true });
const script = path.join(bin, 'report-playbook');
fs.writeFileSync(script, `#!${ansible!.interpreter}\n${REPORT_SCRIPT}`, { mode: 0o755 });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const newDir = () => fs.mkdtempSync(path.join(root, 'run-'));
const specFor = (mode: 'off' | 'bwrap', dir: string): SandboxSpec =>
  mode === 'off' ? { mode, hidden: [], writable: [dir] } : { mode, hidden: [root], writable: [dir], readable: [bin] };
/** The environment a run in `dir` starts Python with (as pythonStartEnv gives it), with the script's bin on PATH. */
const startEnv = (dir: string): Record<string, string> => ({
  PATH: `${bin}:${process.env.PATH}`,
  HOME: path.join(dir, 'home'),
  TMPDIR: path.join(dir, 'tmp'),
  LANG: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  PYTHONUNBUFFERED: '1',
});
const pythonFor = (dir: string, ahead = true): PythonLaunch => ({
  interpreter: ansible!.interpreter,
  script,
  env: startEnv(dir),
  ahead,
});

function ended(launch: RunLaunch): Promise<{ out: string; code: number | null }> {
  let out = '';
  launch.child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => launch.child.once('close', (code) => resolve({ out, code })));
}
type Report = {
  preloaded: string[];
  argv: string[];
  path0: string;
  cwd: string;
  env: Record<string, string>;
  cmdline: string[];
  name: string;
  file: string;
  tempdir: string;
  stdin: string;
  int_ignored: boolean;
  term_ignored: boolean;
  pipe_ignored: boolean;
};
const reportOf = (out: string): Report => JSON.parse(out.split('\n').find((l) => l.startsWith('{'))!) as Report;

/**
 * Starts a launch in a new directory, waits `settleMs` (the launch loads meanwhile, as one kept ahead does before its
 * run comes; without a wait it loads before it reads the command anyway), hands it `command` (built for that
 * directory), reports.
 */
async function launched(
  mode: 'off' | 'bwrap',
  command: (dir: string) => LaunchCommand,
  { ahead = true, settleMs = 0 }: { ahead?: boolean; settleMs?: number } = {},
) {
  const dir = newDir();
  const launch = new RunLaunch(dir, specFor(mode, dir), pythonFor(dir, ahead));
  const result = ended(launch);
  await sleep(settleMs);
  // What prepareRun makes once the run comes, after the launch started.
  for (const d of ['home', 'tmp', 'project']) fs.mkdirSync(path.join(dir, d));
  launch.give(command(dir));
  return { dir, launch, ...(await result) };
}
const runEnv = (dir: string, more: Record<string, string> = {}) => ({
  ...startEnv(dir),
  ANSIBLE_CONFIG: path.join(dir, 'ansible.cfg'),
  BATON_EVENTS_FD: '3',
  SSH_AUTH_SOCK: path.join(dir, 'agent.sock'),
  ...more,
});

describe.each(['off', 'bwrap'] as const)('the Python waiter (sandbox %s)', (mode) => {
  it('runs the script in its own process with the libraries loaded ahead, as `python3 script` would see it', async () => {
    const { dir, out, code } = await launched(
      mode,
      (d) => ({
        command: 'report-playbook',
        args: ['two words', 'ünïcode', '--', 'x'],
        env: runEnv(d),
        cwd: path.join(d, 'project'),
      }),
      { settleMs: 600 },
    );
    expect(code).toBe(0);
    const report = reportOf(out);
    expect(report.preloaded).toEqual(['jinja2', 'yaml']);
    expect(report.cmdline).toEqual([ansible!.interpreter, PYTHON_LAUNCHER, script, '1']);
    expect(report.argv).toEqual([script, 'two words', 'ünïcode', '--', 'x']);
    expect(report.path0).toBe(bin);
    expect(report).toMatchObject({ name: '__main__', file: script, cwd: path.join(dir, 'project'), stdin: '' });
    expect(report.env).toEqual(runEnv(dir));
    // TMPDIR did not exist while the launch loaded: found again, not /tmp.
    expect(report.tempdir).toBe(path.join(dir, 'tmp'));
    // As any Python: SIGINT handled (KeyboardInterrupt), SIGTERM default, SIGPIPE ignored.
    expect(report).toMatchObject({ int_ignored: false, term_ignored: false, pipe_ignored: true });
  });

  it("passes the script's exit code on, and a SIGINT reaches it as KeyboardInterrupt", async () => {
    const exited = await launched(mode, (d) => ({ command: script, args: ['exit-3'], env: runEnv(d), cwd: d }));
    expect(reportOf(exited.out).cmdline[1]).toBe(PYTHON_LAUNCHER);
    expect(exited.code).toBe(3);

    const dir = newDir();
    const launch = new RunLaunch(dir, specFor(mode, dir), pythonFor(dir));
    const result = ended(launch);
    let seen = '';
    launch.child.stdout!.on('data', (d: Buffer) => (seen += d.toString()));
    await sleep(600);
    fs.mkdirSync(path.join(dir, 'tmp'));
    launch.give({ command: script, args: ['wait'], env: runEnv(dir), cwd: dir });
    for (let i = 0; i < 200 && !seen.includes('waiting'); i++) await sleep(20);
    process.kill(-launch.child.pid!, 'SIGINT');
    const { out, code } = await result;
    expect(out).toContain('interrupted');
    expect(code).toBe(130);
  });

  it('given at once (nothing loaded ahead), still runs the script in its own process', async () => {
    const { out, code } = await launched(mode, (d) => ({ command: script, args: [], env: runEnv(d), cwd: d }), {
      ahead: false,
    });
    expect(code).toBe(0);
    const report = reportOf(out);
    expect(report.cmdline).toEqual([ansible!.interpreter, PYTHON_LAUNCHER, script, '0']);
    expect(report.preloaded).toEqual([]);
  });

  it.each([
    ['a PYTHON variable of its own', (d: string) => runEnv(d, { PYTHONPATH: d })],
    ['another variable Python or a library may read', (d: string) => runEnv(d, { OPENSSL_CONF: '/dev/null' })],
    ['another HOME', (d: string) => runEnv(d, { HOME: d })],
    ['no locale', (d: string) => ({ ...runEnv(d), LC_ALL: '' })],
  ])('with %s, execs the script instead: a fresh Python that loaded nothing', async (_what, env) => {
    const { dir, out, code } = await launched(mode, (d) => ({ command: script, args: ['a'], env: env(d), cwd: d }));
    expect(code).toBe(0);
    const report = reportOf(out);
    expect(report.cmdline).toEqual([ansible!.interpreter, script, 'a']);
    expect(report.preloaded).toEqual([]);
    expect(report.env).toEqual(env(dir));
  });

  it('execs any other command with default signals (Python ignores SIGPIPE itself) and stdin on /dev/null', async () => {
    const { out, code } = await launched(mode, (d) => ({
      command: '/bin/sh',
      args: ['-c', 'grep -E "^SigIgn" /proc/self/status; printf "stdin=[%s]\\n" "$(cat)"; env', 'sh'],
      env: { PATH: '/usr/bin:/bin', ONLY: 'this' },
      cwd: d,
    }));
    expect(code).toBe(0);
    expect(out).toMatch(/^SigIgn:\s*0+$/m);
    expect(out).toContain('stdin=[]\n');
    expect(out).toContain('ONLY=this\n');
    expect(out).not.toContain('HOME=');
  });

  it('says so when the command or its directory is missing, and ends quietly when discarded', async () => {
    const missing = await launched(mode, (d) => ({ command: 'no-such-playbook', args: [], env: runEnv(d), cwd: d }));
    expect(missing.out).toContain('baton: cannot run no-such-playbook: No such file or directory');
    expect(missing.code).not.toBe(0);
    const noDir = await launched(mode, (d) => ({ command: script, args: [], env: runEnv(d), cwd: path.join(d, 'x') }));
    expect(noDir.out).toContain('baton: cannot enter the run directory: No such file or directory');
    expect(noDir.code).not.toBe(0);

    const dir = newDir();
    const discarded = new RunLaunch(dir, specFor(mode, dir), pythonFor(dir));
    const result = ended(discarded);
    await sleep(300);
    discarded.child.stdin!.end(); // what a pool's clean-up of an unused launch amounts to, without the kill
    expect(await result).toEqual({ out: '', code: 0 });
  });
});

describe("ansible-playbook's Python", () => {
  const pathWith = (shebang: string, mode = 0o755, rest = ':/usr/bin:/bin') => {
    const dir = fs.mkdtempSync(path.join(root, 'path-'));
    fs.writeFileSync(path.join(dir, 'ansible-playbook'), `${shebang}\nprint("hi")\n`, { mode });
    return `${dir}${rest}`;
  };

  it('is the #! line, directly or through env found on PATH', () => {
    const direct = pathWith('#!/usr/bin/python3');
    expect(ansiblePythonLaunch({ PATH: direct }, true)).toEqual({
      interpreter: '/usr/bin/python3',
      script: `${direct.split(':')[0]}/ansible-playbook`,
      env: { PATH: direct },
      ahead: true,
    });
    const viaEnv = pathWith('#! /usr/bin/env python3');
    expect(ansiblePythonLaunch({ PATH: viaEnv }, false)).toMatchObject({
      interpreter: '/usr/bin/python3',
      ahead: false,
    });
  });

  it.each([
    ['a Python with options (they change how it runs)', '#!/usr/bin/python3 -s'],
    ['another program', '#!/bin/sh'],
    ['no #! line', 'import sys'],
    ['a Python through env that is not on PATH', '#!/usr/bin/env python9.99'],
  ])('is none for a script whose first line is %s: the perl waiter then', (_what, shebang) => {
    expect(ansiblePythonLaunch({ PATH: pathWith(shebang) }, true)).toBeUndefined();
  });

  it('for the build (which compiles the callback plugin with it), is named with options too, `env -S` forms included', () => {
    expect(ansiblePython(pathWith('#!/usr/bin/python3 -s'))).toMatchObject({
      interpreter: '/usr/bin/python3',
      alone: false,
    });
    expect(ansiblePython(pathWith('#!/usr/bin/env -S PYTHONHASHSEED=0 python3 -E'))).toMatchObject({
      interpreter: '/usr/bin/python3',
      alone: false,
    });
    expect(ansiblePython(pathWith('#!/usr/bin/env python3'))).toMatchObject({ alone: true });
    expect(ansiblePython(pathWith('#!/bin/sh -e'))).toBeUndefined();
  });

  it('is none when ansible-playbook is missing or not executable', () => {
    expect(ansiblePythonLaunch({ PATH: pathWith('#!/usr/bin/python3', 0o644, '') }, true)).toBeUndefined();
    expect(ansiblePythonLaunch({ PATH: root }, true)).toBeUndefined();
  });
});
