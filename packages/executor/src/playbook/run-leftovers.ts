// What a run leaves behind when the server dies without cleaning up (SIGKILL, power loss): its private directory,
// maybe its ssh-agent (which holds a decrypted key) and, with the sandbox off, ansible's process group. Each run
// records in `<runDir>/pids.json` who owns it and which processes are its; at start-up the server removes every
// run directory whose owner is gone, killing what is left of its processes first.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const RUN_DIR_PREFIX = 'baton-run-';
export const PIDS_FILE = 'pids.json';
/** A run directory without pids.json is a run that is just starting, unless it is older than this. */
const ORPHAN_AGE_MS = 60 * 60 * 1000;

export interface RunPids {
  server_pid: number;
  /** the server's start time (clock ticks since boot), so a reused pid is not taken for the server */
  server_started?: number | undefined;
  /** ansible's process group (the chain is spawned as its leader) */
  ansible_pgid?: number | undefined;
  agent_pid?: number | undefined;
}

/** Records (replaces) the run's pids.json; written in place, so a read-only bind mount of it sees each update. */
export function recordRunPids(dir: string, pids: RunPids): void {
  fs.writeFileSync(path.join(dir, PIDS_FILE), JSON.stringify(pids), { mode: 0o600 });
}

/** Fields of /proc/<pid>/stat after the command name (field 3, the state, is index 0); undefined when gone. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** The start time of a process in clock ticks since boot (field 22 of /proc/<pid>/stat). */
export function processStartTime(pid: number): number | undefined {
  const started = Number(statFields(pid)?.[19]);
  return Number.isFinite(started) ? started : undefined;
}

/** Whether the server that owns a run still runs: the pid exists (not a zombie) and, when recorded, started then. */
function serverAlive(pids: RunPids): boolean {
  const fields = statFields(pids.server_pid);
  if (!fields || fields[0] === 'Z') return false;
  return pids.server_started === undefined || Number(fields[19]) === pids.server_started;
}

const isPid = (n: unknown): n is number => Number.isInteger(n) && (n as number) > 1 && (n as number) < 2 ** 31;

function readPids(dir: string): RunPids | 'missing' | 'unreadable' {
  let text: string;
  try {
    text = fs.readFileSync(path.join(dir, PIDS_FILE), 'utf8');
  } catch {
    return 'missing';
  }
  try {
    const raw = JSON.parse(text) as Record<string, unknown>;
    if (!isPid(raw.server_pid)) return 'unreadable';
    const optionalPid = (v: unknown) => (isPid(v) ? v : undefined);
    return {
      server_pid: raw.server_pid,
      server_started: typeof raw.server_started === 'number' ? raw.server_started : undefined,
      ansible_pgid: optionalPid(raw.ansible_pgid),
      agent_pid: optionalPid(raw.agent_pid),
    };
  } catch {
    return 'unreadable';
  }
}

/**
 * Whether a process is one of the run's: its command line names a path in the run directory (ansible's inventory,
 * bwrap's mounts, the agent's socket, an ssh master's control path) or it works inside it (a local module). The
 * recorded pids are not trusted alone: a pid may have been reused since, and the file itself sits in the run
 * directory (read-only inside the sandbox, but writable without it).
 */
function belongsToRun(pid: number, dirForms: string[]): boolean {
  try {
    const args = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (args.some((a) => dirForms.some((d) => a === d || a.includes(d + path.sep)))) return true;
  } catch {
    // gone, or not ours to read
  }
  try {
    const cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
    return dirForms.some((d) => cwd === d || cwd.startsWith(d + path.sep));
  } catch {
    return false;
  }
}

function processGroupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    if (fields && fields[0] !== 'Z' && Number(fields[2]) === pgid) members.push(Number(entry));
  }
  return members;
}

function kill(target: number, signal: NodeJS.Signals): void {
  try {
    process.kill(target, signal);
  } catch {
    // already gone
  }
}

/** SIGKILLs the recorded process group and agent, each only if one of its processes is the run's. */
function killRunProcesses(pids: RunPids, dirForms: string[]): void {
  if (
    pids.ansible_pgid !== undefined &&
    processGroupMembers(pids.ansible_pgid).some((p) => belongsToRun(p, dirForms))
  ) {
    kill(-pids.ansible_pgid, 'SIGKILL');
  }
  if (pids.agent_pid !== undefined && belongsToRun(pids.agent_pid, dirForms)) {
    // The agent was spawned as the leader of its own group.
    kill(-pids.agent_pid, 'SIGKILL');
    kill(pids.agent_pid, 'SIGKILL');
  }
}

/** How long a master asked to exit may take to remove its socket, its last act before it exits. */
const MASTER_EXIT_WAIT_MS = 3_000;

/**
 * Asks every ssh ControlPersist master of a run to exit, so none outlives it holding a connection, and waits until
 * each has removed its control socket: `ssh -O exit` returns once the master has the request, not once it is gone.
 * (Waiting on the socket, not a pid: inside the sandbox's PID namespace the master knows only a pid of that
 * namespace, which names another process out here.)
 */
export async function closeControlSockets(controlDir: string, env: NodeJS.ProcessEnv): Promise<void> {
  const sockets = await fs.promises.readdir(controlDir).catch(() => [] as string[]);
  await Promise.all(
    sockets.map(async (name) => {
      const socket = path.join(controlDir, name);
      const asked = await new Promise<boolean>((resolve) => {
        execFile(
          'ssh',
          ['-F', '/dev/null', '-o', `ControlPath=${socket}`, '-O', 'exit', 'baton-control'],
          { env, timeout: 5_000 },
          (err) => resolve(!err),
        );
      });
      // No master answered (a stale socket of a killed one): nothing will remove it, nothing to wait for.
      if (!asked) return;
      const deadline = Date.now() + MASTER_EXIT_WAIT_MS;
      while (fs.existsSync(socket) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    }),
  );
}

/**
 * Removes what runs of dead servers left in `workRoot`: every `baton-run-*` directory whose pids.json names a
 * server that no longer runs (or that has no readable pids.json and is older than an hour) has its process
 * group and ssh-agent killed, its ssh control sockets closed, and is removed. Runs of live servers (this one
 * included) are left alone. Returns the directories removed.
 */
export async function cleanupLeftoverRuns(
  workRoot: string,
  opts: { now?: (() => number) | undefined } = {},
): Promise<string[]> {
  const now = opts.now ?? Date.now;
  const entries = await fs.promises.readdir(workRoot, { withFileTypes: true }).catch(() => [] as fs.Dirent[]);
  const removed: string[] = [];
  for (const entry of entries) {
    if (!entry.isDirectory() || !entry.name.startsWith(RUN_DIR_PREFIX)) continue;
    const dir = path.join(workRoot, entry.name);
    const pids = readPids(dir);
    if (typeof pids === 'object') {
      if (serverAlive(pids)) continue;
    } else {
      const stat = fs.statSync(dir, { throwIfNoEntry: false });
      if (!stat || now() - stat.mtimeMs < ORPHAN_AGE_MS) continue;
    }
    try {
      const dirForms = [...new Set([dir, fs.realpathSync(dir)])];
      if (typeof pids === 'object') killRunProcesses(pids, dirForms);
      await closeControlSockets(path.join(dir, 'cp'), { PATH: process.env.PATH });
      await fs.promises.rm(dir, { recursive: true, force: true });
      removed.push(dir);
    } catch {
      // Removed meanwhile, or not ours to remove: the next directory is worth trying all the same.
    }
  }
  return removed;
}
