// ansible-playbook as a process: started in a process group of its own at the lowest CPU priority, its output
// streamed, and stopped on cancel or timeout by escalating SIGINT → SIGTERM → SIGKILL on that group.
import type { ChildProcess } from 'node:child_process';
import fsSync from 'node:fs';
import type { RunEventStream } from './run-event-stream.js';

/** The fd on which the callback plugin writes its JSON lines (stdin, stdout, stderr, then this pipe). */
export const EVENTS_FD = 3;

export interface AnsibleResult {
  exitCode: number | null;
  stoppedFor?: 'canceled' | 'timeout' | undefined;
}

export interface RunAnsibleOptions {
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
  interruptGraceMs: number;
  terminateGraceMs: number;
}

const delay = (ms: number) => new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), ms).unref());

export function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is gone already, or (in the first milliseconds) not made yet: the process itself then.
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  }
}

/**
 * Whether this process has a controlling terminal (`baton serve` started by hand in a terminal). Then ansible
 * gets a session of its own, so no playbook can reach that terminal (TIOCSTI keystroke injection). Otherwise
 * (systemd, containers, CI) it stays in the server's session: Linux schedules each session as one group
 * (autogroup), and a session per run would make every playbook weigh as much as the whole server, so
 * `SCHED_IDLE` could not keep dispatch and the API ahead of twenty starting playbooks.
 */
let terminalAttached: boolean | undefined;
export function hasControllingTerminal(): boolean {
  if (terminalAttached === undefined) {
    try {
      fsSync.closeSync(fsSync.openSync('/dev/tty', 'r'));
      terminalAttached = true;
    } catch {
      terminalAttached = false;
    }
  }
  return terminalAttached;
}

/** Own process group (for cancel) without a new session: `setpgid(0, 0)`, then the command. perl-base is essential on Debian. */
const OWN_GROUP = [
  'perl',
  '-e',
  'setpgrp(0, 0) or die "baton: setpgid: $!\\n"; exec { $ARGV[0] } @ARGV or die "baton: cannot run $ARGV[0]: $!\\n"',
];

/**
 * Linux's numbers, by `process.arch`, of the two system calls perl has no built-in for: prctl (PR_SET_PDEATHSIG)
 * and sched_setscheduler (SCHED_IDLE). Elsewhere the chain falls back to setpriv, sh and chrt. The launcher reads
 * the death signal back, so a perl of another ABI (a 32-bit one on a 64-bit kernel) fails loudly, not silently.
 */
const SYSCALLS: Partial<Record<string, { prctl: number; schedSetscheduler: number }>> = {
  x64: { prctl: 157, schedSetscheduler: 144 },
  arm64: { prctl: 167, schedSetscheduler: 119 },
};

/**
 * `BATON_RUN_PRIORITY`, the CPU priority of ansible-playbook and ansible-galaxy. `idle` (SCHED_IDLE) never slows the
 * API, even under twenty starting playbooks, but a run gets no CPU while anything else on the machine wants it all:
 * a box shared with CPU-bound work stalls its runs. `low` (SCHED_BATCH, 10 nicer than the server) still yields to the
 * server and is never starved; `normal` runs as the server does.
 */
export const RUN_PRIORITIES = ['idle', 'low', 'normal'] as const;
export type RunPriority = (typeof RUN_PRIORITIES)[number];

/** Each priority as a scheduling policy (SCHED_IDLE 5, SCHED_BATCH 3; -1 keeps the server's), a nice increment, and
 * the same as programs for the fallback chain. */
const SCHEDULING: Record<RunPriority, { policy: number; nice: number; programs: string }> = {
  idle: { policy: 5, nice: 0, programs: 'chrt --idle 0 ' },
  low: { policy: 3, nice: 10, programs: 'nice -n 10 chrt --batch 0 ' },
  normal: { policy: -1, nice: 0, programs: '' },
};

/**
 * The whole chain in one perl process: what setpriv, sh and chrt did as three more programs (bench/overhead: each
 * exec is a millisecond or more before ansible starts). Arguments: whether to lead a process group of its own, the
 * two syscall numbers, this server's pid, the scheduling policy and nice increment, then the command. stderr is
 * joined first, so its own complaints reach the log; the parent is checked after PR_SET_PDEATHSIG is set, so a server
 * that died before is not missed.
 */
const LAUNCHER = [
  'my ($group, $prctl, $sched, $parent, $policy, $nice) = splice(@ARGV, 0, 6);',
  'open(STDERR, ">&", \\*STDOUT) or die "baton: stderr: $!\\n";',
  'if ($group) { setpgrp(0, 0) or die "baton: setpgid: $!\\n" }',
  'syscall($prctl, 1, 9) == 0 or die "baton: prctl: $!\\n";',
  'my $signal = pack("i", 0);',
  'syscall($prctl, 2, $signal) == 0 && unpack("i", $signal) == 9 or die "baton: the death signal did not hold\\n";',
  'getppid() == $parent or die "baton: the server is gone\\n";',
  'if ($policy >= 0) { my $param = pack("i", 0); syscall($sched, 0, $policy, $param) == 0 or die "baton: sched_setscheduler: $!\\n" }',
  'if ($nice) { setpriority(0, 0, getpriority(0, 0) + $nice) or die "baton: setpriority: $!\\n" }',
  'exec { $ARGV[0] } @ARGV or die "baton: cannot run $ARGV[0]: $!\\n";',
].join(' ');

export interface LaunchChainOptions {
  /** `process.arch` by default; the tests pick one without syscall numbers to run the fallback chain */
  arch?: string | undefined;
  /** the process that spawns the chain (this one by default): the chain ends itself if that one is gone */
  parentPid?: number | undefined;
  /** the command's CPU priority (idle by default) */
  priority?: RunPriority | undefined;
}

/**
 * How the executor starts ansible-playbook and ansible-galaxy: the kernel kills the command if this server dies,
 * even of SIGKILL (PR_SET_PDEATHSIG), it runs at the given CPU priority (by default the lowest, SCHED_IDLE: twenty
 * processes starting at once must not starve the API), with stderr joined to stdout so lines keep their order, and leads a process group of
 * its own (a session of its own only when the server has a terminal, see hasControllingTerminal), which cancel and
 * timeouts signal. Spawn the result with `detached` as given.
 */
export function ownGroupChain(
  command: string,
  args: string[],
  { arch = process.arch, parentPid = process.pid, priority = 'idle' }: LaunchChainOptions = {},
): { command: string; args: string[]; detached: boolean } {
  const ownSession = hasControllingTerminal();
  const calls = process.platform === 'linux' ? SYSCALLS[arch] : undefined;
  const scheduling = SCHEDULING[priority];
  if (calls) {
    const group = ownSession ? '0' : '1';
    const launch = [
      LAUNCHER,
      group,
      String(calls.prctl),
      String(calls.schedSetscheduler),
      String(parentPid),
      String(scheduling.policy),
      String(scheduling.nice),
    ];
    return { command: 'perl', args: ['-e', ...launch, command, ...args], detached: ownSession };
  }
  const chain = [
    'setpriv',
    '--pdeathsig',
    'KILL',
    '--',
    '/bin/sh',
    '-c',
    `exec ${scheduling.programs}"$0" "$@" 2>&1`,
    command,
    ...args,
  ];
  const [first, ...rest] = ownSession ? chain : [...OWN_GROUP, ...chain];
  return { command: first!, args: rest, detached: ownSession };
}

/**
 * Watches ansible-playbook, started (see run-launch.ts) in its own process group: streams its output into `stream`
 * and stops it on request. Rejects when it could not start or when handling its output throws (the event consumer
 * broke): the group is stopped first, so nothing keeps running unwatched.
 */
export function runAnsible(
  child: ChildProcess,
  stream: Pick<RunEventStream, 'stdout' | 'ansibleEvents'>,
  opts: RunAnsibleOptions,
): Promise<AnsibleResult> {
  return new Promise((resolve, reject) => {
    let stoppedFor: AnsibleResult['stoppedFor'] | 'broken';
    let failure: unknown;
    const exited = new Promise<'exited'>((r) => child.once('exit', () => r('exited')));
    const stop = async (why: NonNullable<typeof stoppedFor>) => {
      if (stoppedFor || child.exitCode !== null || child.signalCode !== null) return;
      stoppedFor = why;
      signalGroup(child, 'SIGINT');
      if ((await Promise.race([exited, delay(opts.interruptGraceMs)])) === 'exited') return;
      signalGroup(child, 'SIGTERM');
      if ((await Promise.race([exited, delay(opts.terminateGraceMs)])) === 'exited') return;
      signalGroup(child, 'SIGKILL');
    };
    const onAbort = () => void stop('canceled');
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const timer = opts.timeoutMs === undefined ? undefined : setTimeout(() => void stop('timeout'), opts.timeoutMs);

    // A throw inside a stream listener would be an uncaught exception for the whole server.
    const guarded = (handle: (chunk: Buffer) => void) => (chunk: Buffer) => {
      if (failure !== undefined) return;
      try {
        handle(chunk);
      } catch (err) {
        failure = err;
        void stop('broken');
      }
    };
    child.stdout!.on(
      'data',
      guarded((chunk) => stream.stdout(chunk)),
    );
    (child.stdio[EVENTS_FD] as NodeJS.ReadableStream).on(
      'data',
      guarded((chunk) => stream.ansibleEvents(chunk)),
    );
    // Whatever ansible left behind in its group (a module's child, a stuck worker) goes with it; otherwise a
    // leftover holding the pipes would keep 'close' from ever coming.
    child.once('exit', () => killProcessGroupOf(child.pid));
    const done = () => {
      opts.signal?.removeEventListener('abort', onAbort);
      if (timer) clearTimeout(timer);
    };
    child.once('error', (err) => {
      done();
      reject(err);
    });
    child.once('close', (exitCode) => {
      done();
      if (failure !== undefined) reject(failure);
      else resolve({ exitCode, stoppedFor: stoppedFor === 'broken' ? undefined : stoppedFor });
    });
    if (opts.signal?.aborted) onAbort();
  });
}

function killProcessGroupOf(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Nothing was left in the group.
  }
}
