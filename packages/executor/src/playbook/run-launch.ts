// A run's process, started before its command is known: the launch chain (own process group, parent-death signal,
// CPU priority, see run-process.ts) and the sandbox around a small program that waits on stdin for the command,
// its environment and its directory, then becomes the command. A run that starts one is given its command at once;
// one started ahead (WarmLaunches) is already waiting when the next run comes, which takes the chain's and the
// sandbox's start-up (~6 ms, bench/overhead) off that run's time. The waiter is Python when ansible-playbook is a
// Python script (launcher/python_launch.py): started ahead, it has loaded ansible's libraries by then (~130 ms).
import { type ChildProcess, spawn } from 'node:child_process';
import fsSync from 'node:fs';
import { type SandboxSpec, sandboxed, sandboxMounts } from '../sandbox/sandbox.js';
import { ownGroupChain, signalGroup } from './run-process.js';
import { PYTHON_LAUNCHER } from './package-files.js';
import { ansiblePython } from './ansible-python.js';

/** What a launch becomes. */
export interface LaunchCommand {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/**
 * Reads its whole stdin (NUL-separated: the directory, the number of environment entries, the entries, the command
 * and its arguments), puts /dev/null in its place, and execs the command with exactly that environment and with
 * SIGINT and SIGTERM back at their defaults (the sandbox's outer process ignores both, an ignored signal stays
 * ignored across exec; see sandbox.ts). An empty stdin (a launch discarded unused) ends it quietly.
 * perl-base only, like the launcher.
 */
const WAITER = [
  'local $/; my $spec = <STDIN>; exit 0 unless defined $spec && length $spec;',
  'open(STDIN, "<", "/dev/null") or die "baton: stdin: $!\\n";',
  'my ($cwd, $count, @rest) = split /\\0/, $spec, -1;',
  '%ENV = map { split /=/, $_, 2 } splice(@rest, 0, $count);',
  'chdir $cwd or die "baton: cannot enter the run directory: $!\\n";',
  '$SIG{INT} = $SIG{TERM} = "DEFAULT";',
  'exec { $rest[0] } @rest or die "baton: cannot run $rest[0]: $!\\n";',
].join(' ');

/** The Python waiter: ansible-playbook's interpreter, the script, and the environment the waiter starts with. */
export interface PythonLaunch {
  interpreter: string;
  script: string;
  /** what the run's environment will hold of PATH, HOME, TMPDIR, the locale and PYTHON* (it must match exactly) */
  env: Record<string, string>;
  /** load ansible's libraries while waiting: for a launch kept ahead (one given its command at once would wait) */
  ahead: boolean;
}

/**
 * The Python waiter for a launch, when ansible-playbook on `env.PATH` is a Python script whose `#!` line is the
 * interpreter alone. Read for each launch: an upgrade of ansible or Python between runs is seen.
 */
export function ansiblePythonLaunch(env: Record<string, string>, ahead: boolean): PythonLaunch | undefined {
  const found = ansiblePython(env.PATH ?? '');
  return found?.alone ? { interpreter: found.interpreter, script: found.script, env, ahead } : undefined;
}

/** The command as the waiter reads it; a NUL anywhere would shift every field after it, as it fails spawn(). */
function encodeCommand(c: LaunchCommand): Buffer {
  const env = Object.entries(c.env)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => `${name}=${value}`);
  const fields = [c.cwd, String(env.length), ...env, c.command, ...c.args];
  if (fields.some((f) => f.includes('\0')))
    throw new TypeError("the run's command, environment or directory holds a NUL character");
  return Buffer.from(fields.join('\0'));
}

export class RunLaunch {
  readonly child: ChildProcess;
  /** the sandbox it runs in (sandboxMounts), to compare with what a run needs */
  readonly mounts: string;
  private given = false;
  private failed = false;

  /**
   * Starts the chain in `dir` (the run directory), sandboxed by `sandbox`; `sandboxed` throws for a missing path. With
   * `python` the waiter is Python (launcher/python_launch.py, which the sandbox must let it read), else perl.
   */
  constructor(
    readonly dir: string,
    sandbox: SandboxSpec,
    python?: PythonLaunch,
  ) {
    const waiter = python
      ? sandboxed(python.interpreter, [PYTHON_LAUNCHER, python.script, python.ahead ? '1' : '0'], sandbox, {
          restoreSignals: false,
        })
      : sandboxed('perl', ['-e', WAITER], sandbox, { restoreSignals: false });
    const chain = ownGroupChain(waiter.command, waiter.args, { priority: sandbox.priority });
    this.mounts = sandboxMounts(sandbox);
    this.child = spawn(chain.command, chain.args, {
      cwd: dir,
      // Nothing of the run's (the waiter sets the command's environment itself), except what Python reads as it
      // starts, which the run's environment repeats.
      env: python?.env ?? { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin' },
      detached: chain.detached,
      // stdin carries the command; stdout (stderr joined by the launcher) and the events descriptor are the run's.
      stdio: ['pipe', 'pipe', 'ignore', 'pipe'],
    });
    this.child.once('error', () => (this.failed = true));
    // A launch that died before its command: its exit says so, not an EPIPE here.
    this.child.stdin!.on('error', () => {});
  }

  /** Still waiting for a command: started, not given one, not ended. */
  get waiting(): boolean {
    const c = this.child;
    return !this.given && !this.failed && c.pid !== undefined && c.exitCode === null && c.signalCode === null;
  }

  /** Hands over the command; it runs as this launch's process. Throws for a NUL character, before anything is sent. */
  give(command: LaunchCommand): void {
    const spec = encodeCommand(command);
    this.given = true;
    this.child.stdin!.end(spec);
  }

  /** Kills the launch (its whole group); with `removeDir`, its run directory goes too. */
  discard({ removeDir }: { removeDir: boolean }): void {
    this.given = true;
    signalGroup(this.child, 'SIGKILL');
    this.child.stdin!.destroy();
    this.child.stdout!.destroy();
    (this.child.stdio[3] as NodeJS.ReadableStream & { destroy(): void }).destroy();
    if (removeDir) fsSync.rmSync(this.dir, { recursive: true, force: true });
  }
}

export interface WarmLaunches {
  /** The launch started ahead for runs of this kind (`key`: their settings), if one is waiting; else undefined. */
  take(key: string): RunLaunch | undefined;
  /** Starts the next launch ahead for runs of this kind, unless one is waiting or starting (after a run). */
  prepare(key: string, start: () => Promise<RunLaunch>): void;
  /** Discards the waiting launch and its directory; later prepare() calls start nothing. */
  close(): void;
}

export interface WarmLaunchesOptions {
  /** a launch not taken within this long is discarded (60 s): an idle server keeps no extra processes */
  idleMs?: number | undefined;
}

export const DEFAULT_WARM_IDLE_MS = 60_000;

/** One launch kept ahead, for the next run: enough for runs one after another, the case where start-up shows. */
export function createWarmLaunches({ idleMs = DEFAULT_WARM_IDLE_MS }: WarmLaunchesOptions = {}): WarmLaunches {
  let ready: { key: string; launch: RunLaunch; timer: NodeJS.Timeout } | undefined;
  let starting = false;
  let closed = false;

  const drop = () => {
    if (!ready) return;
    clearTimeout(ready.timer);
    const { launch } = ready;
    ready = undefined;
    try {
      launch.discard({ removeDir: true });
    } catch {
      // Its directory is a leftover then, cleared with the others at the next start.
    }
  };

  return {
    take(key) {
      if (!ready) return undefined;
      const { launch } = ready;
      if (ready.key !== key || !launch.waiting) {
        drop();
        return undefined;
      }
      clearTimeout(ready.timer);
      ready = undefined;
      return launch;
    },
    prepare(key, start) {
      if (closed || starting || ready?.launch.waiting) return;
      drop();
      starting = true;
      start().then(
        (launch) => {
          starting = false;
          ready = { key, launch, timer: setTimeout(drop, idleMs).unref() };
          if (closed) drop();
        },
        () => {
          // Nothing waits then; the next run starts its own launch and reports whatever broke.
          starting = false;
        },
      );
    },
    close() {
      closed = true;
      drop();
    },
  };
}
