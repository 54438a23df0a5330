// The launch chain itself: what ansible gets from it, in the one-perl form and in the setpriv/sh/chrt fallback.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { hasControllingTerminal, ownGroupChain } from './run-process.js';

const SCHED_IDLE = 5;

/** Runs `command args` through the chain built for `arch`; its stdout (stderr is ignored, as for ansible) and pid. */
function launch(
  arch: string,
  command: string,
  args: string[],
): Promise<{ out: string; pid: number; code: number | null }> {
  const chain = ownGroupChain(command, args, arch);
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

describe.each([
  ['this machine', process.arch],
  ['an architecture without syscall numbers (setpriv, sh, chrt)', 'riscv64'],
])('the launch chain on %s', (_name, arch) => {
  it('execs the command at SCHED_IDLE, leading its own process group in this session, with stderr joined to stdout', async () => {
    expect(hasControllingTerminal()).toBe(false);
    const r = await launch(arch, '/bin/sh', ['-c', 'cat /proc/$$/stat; echo "to stderr" >&2']);
    expect(r.code).toBe(0);
    const [statLine, stderrLine] = r.out.trim().split('\n');
    expect(stderrLine).toBe('to stderr');
    const fields = statFields(statLine!);
    // the shell is the spawned process itself, our child: every step exec'd the next
    expect(Number(statLine!.split(' ')[0])).toBe(r.pid);
    expect(Number(fields[1])).toBe(process.pid); // ppid: field 4
    expect(Number(fields[2])).toBe(r.pid); // pgid: field 5
    expect(Number(fields[3])).toBe(Number(ownStat[3])); // sid: field 6
    expect(Number(fields[38])).toBe(SCHED_IDLE); // policy: field 41
  });

  it('fails with a message on stdout when the command does not exist', async () => {
    const r = await launch(arch, '/nonexistent/ansible-playbook', []);
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/nonexistent\/ansible-playbook/);
  });
});
