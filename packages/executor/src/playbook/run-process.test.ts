// The launch chain itself: what ansible gets from it, in the one-perl form and in the setpriv/sh/chrt fallback.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { hasControllingTerminal, type LaunchChainOptions, ownGroupChain } from './run-process.js';

const SCHED_IDLE = 5;
const SCHED_BATCH = 3;

/** Runs `command args` through the chain; its stdout (stderr is ignored, as for ansible), pid and exit code. */
function launch(
  command: string,
  args: string[],
  opts: LaunchChainOptions,
): Promise<{ out: string; pid: number; code: number | null }> {
  const chain = ownGroupChain(command, args, opts);
  const child = spawn(chain.command, chain.args, { detached: chain.detached, stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ out, pid: child.pid!, code }));
  });
}

/** Fields of /proc/<pid>/stat after the name in parentheses (which may hold spaces): [0] is field 3. */
const statFields = (text: string) =>
  text
    .replace(/^.*\) /s, '')
    .trim()
    .split(' ');
const ownStat = statFields(fs.readFileSync('/proc/self/stat', 'utf8'));
const alive = (pid: number) => fs.existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(readStatus(pid));
const readStatus = (pid: number) => {
  try {
    return fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return '';
  }
};

async function eventually(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * A middle process that spawns the chain (built for it as the parent) and prints the command's pid, so the test can
 * SIGKILL the middle one and watch what the kernel does to the command.
 */
const MIDDLE = `
const { spawn } = require('node:child_process');
process.stdin.once('data', (d) => {
  const chain = JSON.parse(d);
  const child = spawn(chain.command, chain.args, { detached: chain.detached, stdio: 'ignore' });
  console.log(child.pid);
});
setInterval(() => {}, 1000);
`;

describe.each([
  ['this machine', process.arch],
  ['an architecture without syscall numbers (setpriv, sh, chrt)', 'riscv64'],
])('the launch chain on %s', (_name, arch) => {
  it('execs the command at SCHED_IDLE, leading its own process group, with stderr joined to stdout', async () => {
    const r = await launch('/bin/sh', ['-c', 'cat /proc/$$/stat; echo "to stderr" >&2'], { arch });
    expect(r.code).toBe(0);
    const [statLine, stderrLine] = r.out.trim().split('\n');
    expect(stderrLine).toBe('to stderr');
    const fields = statFields(statLine!);
    // the shell is the spawned process itself, our child: every step exec'd the next
    expect(Number(statLine!.split(' ')[0])).toBe(r.pid);
    expect(Number(fields[1])).toBe(process.pid); // ppid: field 4
    expect(Number(fields[2])).toBe(r.pid); // pgid: field 5
    // sid, field 6: this session, unless the server has a terminal (then a session of its own)
    expect(Number(fields[3])).toBe(hasControllingTerminal() ? r.pid : Number(ownStat[3]));
    expect(Number(fields[38])).toBe(SCHED_IDLE); // policy: field 41
    expect(Number(fields[16])).toBe(Number(ownStat[16])); // nice: field 19
  });

  it.each([
    ['idle', SCHED_IDLE, 0],
    ['low', SCHED_BATCH, 10],
    ['normal', Number(ownStat[38]), 0],
  ] as const)(
    'execs the command at priority %s: policy %d, %d nicer than this process',
    async (priority, policy, nicer) => {
      const r = await launch('/bin/sh', ['-c', 'cat /proc/$$/stat'], { arch, priority });
      expect(r.code).toBe(0);
      const fields = statFields(r.out);
      expect(Number(fields[38])).toBe(policy);
      expect(Number(fields[16])).toBe(Number(ownStat[16]) + nicer);
    },
  );

  it('fails with a message on stdout when the command does not exist', async () => {
    const r = await launch('/nonexistent/ansible-playbook', [], { arch });
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/nonexistent\/ansible-playbook/);
  });

  it('dies with the process that started it, even of SIGKILL', async () => {
    const middle = spawn(process.execPath, ['-e', MIDDLE], { stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      const chain = ownGroupChain('sleep', ['300'], { arch, parentPid: middle.pid });
      middle.stdin.write(JSON.stringify(chain));
      const pid = await new Promise<number>((resolve) => middle.stdout.once('data', (d: Buffer) => resolve(Number(d))));
      await eventually(() => fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1') === 'sleep\u0000300\u0000', 'the sleep');
      middle.kill('SIGKILL');
      await eventually(() => !alive(pid), 'the kernel to kill the sleep');
    } finally {
      middle.kill('SIGKILL');
    }
  });
});

describe('the one-perl launch chain', () => {
  it('does not start the command when the process named as its parent is not its parent (already gone)', async () => {
    const r = await launch('/bin/echo', ['ran'], { parentPid: 1 });
    expect(r.code).not.toBe(0);
    expect(r.out).toBe('baton: the server is gone\n');
  });
});
