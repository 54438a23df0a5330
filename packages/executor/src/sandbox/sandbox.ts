// The run sandbox (README, "Security limits to know today"): code that a user supplies (playbooks and their
// modules, inventory scripts and plugins) runs under bubblewrap in its own PID, IPC and UTS namespaces, with
// no capabilities, a read-only view of the host's filesystem, its own /proc (no other process, so no
// /proc/<api pid>/environ), and empty tmpfs mounts over what it must not read (the data directory, other
// runs' directories). The network is shared: playbooks must reach their hosts. The Unix user stays the same.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { RunPriority } from '../playbook/run-process.js';

export type SandboxMode = 'bwrap' | 'off';
/** `BATON_SANDBOX`: `auto` is bwrap when it works on this host (probed once), else off. */
export type SandboxSetting = 'auto' | SandboxMode;
export const SANDBOX_SETTINGS: readonly SandboxSetting[] = ['auto', 'bwrap', 'off'];

/** The `sandbox` option of runPlaybook, parseInventory, runInventorySource and runCapped. */
export interface Sandbox {
  mode: SandboxMode;
  /** paths the sandbox must not see: each directory becomes an empty tmpfs, each file an unreadable /dev/null */
  hidden: string[];
  /** the CPU priority of ansible-playbook and ansible-galaxy (BATON_RUN_PRIORITY; idle when not given) */
  priority?: RunPriority | undefined;
}

export interface SandboxSpec extends Sandbox {
  /** directories the command may write (its run directory); everything else is read-only */
  writable: string[];
  /** directories it must read even when they lie inside a hidden one (a checkout, the callback plugin) */
  readable?: string[] | undefined;
}

/** bubblewrap refused to run on this host although BATON_SANDBOX=bwrap asked for it. */
export class SandboxUnavailableError extends Error {
  override readonly name = 'SandboxUnavailableError';
}

/**
 * The fixed part. `--ro-bind / /` comes BEFORE `--proc` and `--dev`: bubblewrap applies mounts in order, and a
 * root bound after them would cover the private /proc with the host's. `--cap-drop ALL` matters when Baton runs
 * as root: a root sandbox keeps every capability otherwise and could simply unmount the tmpfs over a hidden
 * directory or remount / read-write. No `--new-session`: it would move the command out of the process group
 * that cancel signals (SIGINT, SIGTERM, SIGKILL to the group); the terminal injection it guards against needs a
 * controlling terminal, and our children never share one: when the server has a terminal, ansible gets a session of
 * its own (see hasControllingTerminal in run-playbook.ts); otherwise there is none to share.
 */
const BASE_ARGS = [
  '--die-with-parent',
  '--unshare-pid',
  '--unshare-ipc',
  '--unshare-uts',
  '--cap-drop',
  'ALL',
  '--ro-bind',
  '/',
  '/',
  '--proc',
  '/proc',
  '--dev',
  '/dev',
];

/**
 * The outer bwrap process is in the signalled group too, and dies of SIGINT or SIGTERM at once, taking the
 * sandbox down with it (--die-with-parent, then the PID namespace) before the command can stop gracefully.
 * So bwrap ignores both (an ignored signal stays ignored across exec), and `env --default-signal` gives the
 * command inside its default handling back. SIGKILL still ends everything.
 */
const OUTER_SHELL = 'trap "" INT TERM; exec bwrap "$@"';
const INNER_PREFIX = ['env', '--default-signal=INT,TERM'];

type Mount = { kind: 'hide' | 'read' | 'write'; path: string; isFile?: boolean };
const ORDER: Record<Mount['kind'], number> = { hide: 0, read: 1, write: 2 };
const depth = (p: string) => p.split(path.sep).filter(Boolean).length;
const isInside = (inner: string, outer: string) => outer === path.sep || inner.startsWith(outer + path.sep);

/**
 * A hidden path whose nearest enclosing mount hides already needs no mount of its own; one would even show its
 * name, as a mount point bubblewrap creates in the enclosing tmpfs.
 */
function redundant(m: Mount, mounts: Mount[]): boolean {
  if (m.kind !== 'hide') return false;
  const enclosing = mounts
    .filter((o) => o !== m && o.path !== m.path && isInside(m.path, o.path))
    .sort((a, b) => depth(b.path) - depth(a.path))[0];
  return enclosing?.kind === 'hide';
}

function realExisting(p: string): { path: string; isFile: boolean } | undefined {
  try {
    const real = fs.realpathSync(path.resolve(p));
    return { path: real, isFile: !fs.statSync(real).isDirectory() };
  } catch {
    return undefined;
  }
}

/** Mount options in an order where a path inside another is mounted after it (a run dir inside a hidden root). */
function mountArgs(spec: SandboxSpec): string[] {
  const mounts: Mount[] = [];
  for (const p of spec.hidden) {
    const found = realExisting(p);
    if (!found) continue; // nothing there to read
    if (found.path === path.sep) throw new Error('the sandbox cannot hide the root directory');
    mounts.push({ kind: 'hide', path: found.path, isFile: found.isFile });
  }
  for (const [kind, list] of [
    ['read', spec.readable ?? []],
    ['write', spec.writable],
  ] as const) {
    for (const p of list) {
      const found = realExisting(p);
      if (!found) throw new Error(`the sandbox cannot mount ${p}: it does not exist`);
      mounts.push({ kind, path: found.path });
    }
  }
  mounts.sort((a, b) => depth(a.path) - depth(b.path) || ORDER[a.kind] - ORDER[b.kind]);
  return mounts
    .filter((m) => !redundant(m, mounts))
    .flatMap((m) => {
      if (m.kind === 'write') return ['--bind', m.path, m.path];
      if (m.kind === 'read') return ['--ro-bind', m.path, m.path];
      // A bind mount is nodev: the /dev/null over a hidden file cannot even be opened.
      return m.isFile ? ['--ro-bind', '/dev/null', m.path] : ['--tmpfs', m.path];
    });
}

/**
 * What the sandbox would mount for `spec`, resolved now (the same text for two specs means the same sandbox): a run's
 * process started ahead is used only if its run still needs exactly this.
 */
export function sandboxMounts(spec: SandboxSpec): string {
  return spec.mode === 'off' ? 'off' : mountArgs(spec).join('\0');
}

/**
 * `command args` wrapped for the sandbox: spawn the result instead (with the same cwd, env and stdio; inherited
 * file descriptors pass through). With mode `off` it is the command unchanged. Paths are resolved now: a hidden
 * path that does not exist is skipped, a writable or readable one that does not exist throws. `restoreSignals:
 * false` leaves SIGINT and SIGTERM ignored in the command, for one that restores them itself.
 */
export function sandboxed(
  command: string,
  args: string[],
  opts: SandboxSpec,
  { restoreSignals = true }: { restoreSignals?: boolean } = {},
): { command: string; args: string[] } {
  if (opts.mode === 'off') return { command, args };
  return {
    command: '/bin/sh',
    args: [
      '-c',
      OUTER_SHELL,
      'baton-sandbox',
      ...BASE_ARGS,
      ...mountArgs(opts),
      '--',
      ...(restoreSignals ? INNER_PREFIX : []),
      command,
      ...args,
    ],
  };
}

export type SandboxProbe = { available: true } | { available: false; error: string };

const probes = new Map<string, Promise<SandboxProbe>>();

/** Whether bubblewrap works here (installed, namespaces allowed): runs `bwrap … true` once per process. */
export function probeBwrap(bwrap = 'bwrap'): Promise<SandboxProbe> {
  let probe = probes.get(bwrap);
  if (!probe) {
    probe = new Promise((resolve) => {
      // The same shape as a real run, `env --default-signal` (coreutils 8.31+) included.
      execFile(
        bwrap,
        [...BASE_ARGS, '--', ...INNER_PREFIX, 'true'],
        { env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, timeout: 10_000 },
        (err, _stdout, stderr) => {
          if (!err) resolve({ available: true });
          else resolve({ available: false, error: stderr.trim() || err.message });
        },
      );
    });
    probes.set(bwrap, probe);
  }
  return probe;
}

/** The mode for a setting: `auto` falls back to `off` when bwrap does not work; `bwrap` then throws. */
export async function resolveSandboxMode(
  setting: SandboxSetting,
  probe: () => Promise<SandboxProbe> = probeBwrap,
): Promise<SandboxMode> {
  if (setting === 'off') return 'off';
  const result = await probe();
  if (result.available) return 'bwrap';
  if (setting === 'bwrap')
    throw new SandboxUnavailableError(
      `BATON_SANDBOX=bwrap, but bubblewrap does not work on this host: ${result.error}`,
    );
  return 'off';
}
