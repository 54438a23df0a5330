// A server killed mid-run (SIGKILL) leaves nothing running that holds a secret, and the next start-up removes the
// rest: the run directory, and with the sandbox off what ansible had forked.
import { afterAll, describe, expect, it } from '@jest/globals';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { RunBundle } from '@baton/contracts';
import { sshKeyPair, tempDir } from '../testing/index.js';
import { cleanupLeftoverRuns, PIDS_FILE, processStartTime, type RunPids } from './run-leftovers.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const scratch = tempDir('baton-leftovers-test');
const started: ChildProcess[] = [];
afterAll(() => {
  for (const child of started) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  }
  fs.rmSync(scratch, { recursive: true, force: true });
});

const alive = (pid: number) => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
};
const exists = (pid: number) => {
  try {
    return alive(pid);
  } catch {
    return false;
  }
};
const groupMembers = (pgid: number) =>
  fs
    .readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return fields[0] !== 'Z' && Number(fields[2]) === pgid;
      } catch {
        return false;
      }
    });

/** Whether a live process has `text` in its command line (ps would cut long lines). */
const running = (text: string) =>
  fs.readdirSync('/proc').some((p) => {
    try {
      return /^\d+$/.test(p) && alive(Number(p)) && fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(text);
    } catch {
      return false;
    }
  });

/** Polls until `done()`; fails the test if it never is (a generous bound, not a timing assertion). */
async function eventually(done: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (done()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`never happened: ${what}`);
}

/** A pid that existed and is gone (reaped). */
const deadPid = () => spawnSync('true').pid;

/** A detached long sleep (its own process group) working in `cwd`; `tag` lands in its argv. */
function detachedSleeper(cwd: string, tag = 'x'): ChildProcess {
  const child = spawn('sh', ['-c', 'sleep 300; : "$0"', tag], { cwd, detached: true, stdio: 'ignore' });
  started.push(child);
  return child;
}

function runDirIn(root: string, name: string, pids?: RunPids | string, ageMs = 0): string {
  const dir = path.join(root, name);
  fs.mkdirSync(path.join(dir, 'cp'), { recursive: true });
  if (pids) fs.writeFileSync(path.join(dir, PIDS_FILE), typeof pids === 'string' ? pids : JSON.stringify(pids));
  if (ageMs) {
    const then = new Date(Date.now() - ageMs);
    fs.utimesSync(dir, then, then);
  }
  return dir;
}

describe('cleanupLeftoverRuns', () => {
  it("removes the run directories of dead servers, killing only the recorded processes that are the run's", async () => {
    const root = fs.mkdtempSync(path.join(scratch, 'root-'));
    const ours = { server_pid: process.pid, server_started: processStartTime(process.pid) };
    const hour = 60 * 60 * 1000;

    const orphan = runDirIn(root, 'baton-run-orphan');
    const ansible = detachedSleeper(orphan); // works in the run directory
    const agent = detachedSleeper(scratch, `${orphan}/agent.sock`); // names it in argv
    fs.writeFileSync(
      path.join(orphan, PIDS_FILE),
      JSON.stringify({ server_pid: deadPid(), ansible_pgid: ansible.pid, agent_pid: agent.pid }),
    );
    // A recorded group that is someone else's by now (a reused pid, or a forged file): removed, never killed.
    const stranger = detachedSleeper(scratch);
    const forged = runDirIn(root, 'baton-run-forged', {
      server_pid: deadPid(),
      ansible_pgid: stranger.pid!,
      agent_pid: stranger.pid!,
    });
    const live = runDirIn(root, 'baton-run-live', ours);
    const reusedServerPid = runDirIn(root, 'baton-run-reused', { ...ours, server_started: ours.server_started! - 1 });
    const starting = runDirIn(root, 'baton-run-starting');
    const old = runDirIn(root, 'baton-run-old', undefined, 2 * hour);
    const garbled = runDirIn(root, 'baton-run-garbled', '{"server_pid": "me"', 2 * hour);
    const garbledYoung = runDirIn(root, 'baton-run-garbled-young', '{"server_pid": "me"');
    const unrelated = runDirIn(root, 'not-a-run', undefined, 2 * hour);

    const removed = await cleanupLeftoverRuns(root);
    expect(removed.sort()).toEqual([forged, garbled, old, orphan, reusedServerPid].sort());
    for (const dir of removed) expect(fs.existsSync(dir)).toBe(false);
    for (const dir of [live, starting, garbledYoung, unrelated]) expect(fs.existsSync(dir)).toBe(true);
    await eventually(() => !exists(ansible.pid!) && !exists(agent.pid!), 'the orphaned run processes are killed');
    expect(exists(stranger.pid!)).toBe(true);
    expect(await cleanupLeftoverRuns(root)).toEqual([]);
  });

  it('gives an empty list for a work root that does not exist', async () => {
    expect(await cleanupLeftoverRuns(path.join(scratch, 'missing'))).toEqual([]);
  });
});

// ---- a server in a child process, running a playbook, SIGKILLed mid-run ----

/** A child `node` running runPlaybook from the sources. */
function writeChildFiles(dir: string): { register: string; child: string } {
  // The workspace's TypeScript loader (scripts/ts): the child runs the real sources, transpiled on the fly.
  const register = path.join(REPO_ROOT, 'scripts/ts/register.mjs');
  const child = path.join(dir, 'server.mjs');
  const runPlaybookUrl = pathToFileURL(path.join(REPO_ROOT, 'packages/executor/src/playbook/run-playbook.ts')).href;
  fs.writeFileSync(
    child,
    `
import fs from 'node:fs';
const { runPlaybook } = await import(${JSON.stringify(runPlaybookUrl)});
const [bundleFile, workRoot, mode] = process.argv.slice(2);
const bundle = JSON.parse(fs.readFileSync(bundleFile, 'utf8'));
await runPlaybook(bundle, { workRoot, sandbox: { mode, hidden: [] }, onEvent: (e) => {
  if (e.kind === 'playbook_on_task_start') process.stdout.write('task started\\n');
} });
process.stdout.write('run ended\\n');
`,
  );
  return { register, child };
}

describe.each(['off', 'bwrap'] as const)('a server SIGKILLed mid-run (sandbox %s)', (mode) => {
  it('takes its ssh-agent and ansible with it; cleanupLeftoverRuns kills what ansible forked and removes the run directory', async () => {
    const dir = fs.mkdtempSync(path.join(scratch, `server-${mode}-`));
    const workRoot = path.join(dir, 'work');
    fs.mkdirSync(workRoot);
    const marker = `baton-leftover-${mode}-${process.pid}`;
    const key = sshKeyPair(dir, 'run_key');
    const bundle: RunBundle = {
      run_id: 'run_killed',
      playbook: {
        source: 'inline',
        content: `- hosts: all\n  gather_facts: false\n  tasks:\n    - command: sh -c 'sleep 300; :' ${marker}\n`,
      },
      inventory: { content: 'localhost ansible_connection=local\n', format: 'ini' },
      check: false,
      credentials: [{ type: 'ssh_key', inputs: { private_key: key.privateKey } }],
    };
    const bundleFile = path.join(dir, 'bundle.json');
    fs.writeFileSync(bundleFile, JSON.stringify(bundle), { mode: 0o600 });
    const files = writeChildFiles(dir);
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    const server = spawn(
      process.execPath,
      ['--no-warnings', '--import', pathToFileURL(files.register).href, files.child, bundleFile, workRoot, mode],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    started.push(server);
    let stderr = '';
    server.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const closed = new Promise((resolve) => server.once('close', resolve));
    await new Promise<void>((resolve, reject) => {
      let out = '';
      server.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('task started\n')) resolve();
      });
      void closed.then(() => reject(new Error(`the server exited before the task started: ${stderr}`)));
    });
    await eventually(() => running(`sleep 300; :\0${marker}`), 'the task runs');

    const [runName] = fs.readdirSync(workRoot);
    const runDir = path.join(workRoot, runName!);
    const pids = JSON.parse(fs.readFileSync(path.join(runDir, PIDS_FILE), 'utf8')) as RunPids;
    expect(pids).toEqual({
      server_pid: server.pid,
      server_started: expect.any(Number),
      ansible_pgid: expect.any(Number),
      agent_pid: expect.any(Number),
    });
    expect(exists(pids.agent_pid!)).toBe(true);
    expect(fs.readFileSync(`/proc/${pids.agent_pid}/cmdline`, 'utf8')).toContain('ssh-agent');

    server.kill('SIGKILL');
    await closed;
    // The kernel's doing (pdeathsig): nothing of the dead server cleaned up.
    await eventually(() => !exists(pids.agent_pid!), 'the ssh-agent holding the key dies with the server');
    await eventually(() => !exists(pids.ansible_pgid!), 'ansible-playbook (or bwrap) dies with the server');
    expect(fs.existsSync(runDir)).toBe(true);

    expect(await cleanupLeftoverRuns(workRoot)).toEqual([runDir]);
    expect(fs.existsSync(runDir)).toBe(false);
    await eventually(() => groupMembers(pids.ansible_pgid!).length === 0, "nothing of ansible's process group is left");
    await eventually(() => !running(`sleep 300; :\0${marker}`), 'the task is gone');
  });
});
