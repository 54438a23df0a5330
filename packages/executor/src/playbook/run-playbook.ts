// Runs ONE sealed run bundle with the real ansible-playbook (ARCHITECTURE.md, "Executing ansible-playbook"):
// a private 0700 run directory (always removed), the project checked out at the bundle's commit, secrets
// served off disk (ssh-agent, FIFOs), our callback plugin for structured events, a cancel that escalates
// SIGINT → SIGTERM → SIGKILL on ansible's own process group, and optionally the bubblewrap sandbox.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import fsSync from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BundleCredential, ENV_NAME_PATTERN, isReservedEnvName, type RunBundle, type RunEvent } from '@baton/contracts';
import { GitError, checkoutCommit, startOwnedSshAgent, type OwnedSshAgent } from '../git/git.js';
import { type Sandbox, sandboxed } from '../sandbox/sandbox.js';
import { type HostStats, RunEventStream } from './run-event-stream.js';
import { closeControlSockets, PIDS_FILE, processStartTime, recordRunPids, RUN_DIR_PREFIX, type RunPids } from './run-leftovers.js';
import { secretsOf } from './run-secrets.js';
import { type SecretFifo, serveSecretThroughFifo } from './secret-fifo.js';

export type { HostStats };

export type RunConclusion = 'succeeded' | 'failed' | 'canceled' | 'error';
/** Why a run ended the way it did, where the conclusion alone does not say. */
export type RunReason = 'timeout' | 'canceled' | 'shutdown' | 'bad_playbook' | 'checkout_failed' | 'bad_credential' | 'ansible_error' | 'executor_error' | 'worker_lost';

/**
 * Abort a run's signal with this (`controller.abort(new ShutdownAbort())`) when the server is shutting down: the
 * run then ends `canceled` with reason `shutdown` rather than looking like a user's cancel.
 */
export class ShutdownAbort extends Error {
  override readonly name = 'ShutdownAbort';
  constructor(message = 'the server is shutting down') {
    super(message);
  }
}

/**
 * Abort a run's signal with this when the worker running it lost its lease (queue mode: the lease expired, so
 * the queue may already count the run lost): the run then ends `error` with reason `worker_lost`, not `canceled`.
 */
export class WorkerLostAbort extends Error {
  override readonly name = 'WorkerLostAbort';
  constructor(message = 'this worker lost the lease of the run') {
    super(message);
  }
}

/** By name, not instanceof: the reason may come from another realm (a test runner's, a worker thread's). */
const isAbortNamed = (reason: unknown, name: string): boolean => typeof reason === 'object' && reason !== null && (reason as Error).name === name;
const isShutdownAbort = (reason: unknown): boolean => isAbortNamed(reason, 'ShutdownAbort');
const isWorkerLostAbort = (reason: unknown): boolean => isAbortNamed(reason, 'WorkerLostAbort');

export interface RunOutcome {
  /** ansible-playbook's exit code; null when it never started or was killed by a signal */
  exitCode: number | null;
  conclusion: RunConclusion;
  reason?: RunReason | undefined;
  /** per host, from playbook_on_stats; empty when ansible never got that far */
  stats: Record<string, HostStats>;
  /** how many lines the run's log holds */
  logLines: number;
}

export interface RunPlaybookOptions {
  /** receives every event of the run, in order, `seq` gap-free from 1 */
  onEvent: (event: RunEvent) => void;
  /** parent of the private run directory; os.tmpdir() by default */
  workRoot?: string | undefined;
  /** aborting cancels the run */
  signal?: AbortSignal | undefined;
  now?: (() => Date) | undefined;
  /** how long ansible gets to stop after SIGINT, then after SIGTERM, before the next signal (10 s, 5 s) */
  interruptGraceMs?: number | undefined;
  terminateGraceMs?: number | undefined;
  /** bytes of ansible output kept in the run's log (64 MiB); the rest is dropped with a notice, events go on */
  maxLogBytes?: number | undefined;
  /** largest serialized `res` of one ansible event (256 KiB); a larger one becomes `{truncated: true, bytes}` */
  maxEventResBytes?: number | undefined;
  /** run ansible-playbook in the bubblewrap sandbox, hiding these paths too (off by default) */
  sandbox?: Sandbox | undefined;
  /** called once the ansible-playbook process exists, with the moment it did (dispatch latency is measured up to here) */
  onSpawn?: ((pid: number, at: Date) => void) | undefined;
}

const DEFAULT_INTERRUPT_GRACE_MS = 10_000;
const DEFAULT_TERMINATE_GRACE_MS = 5_000;
export const DEFAULT_MAX_LOG_BYTES = 64 * 1024 * 1024;
export const DEFAULT_MAX_EVENT_RES_BYTES = 256 * 1024;
/** Exit code of ansible-playbook for AnsibleParserError (also used for unreachable hosts, hence the stats check). */
const ANSIBLE_PARSER_ERROR_EXIT = 4;
const INVENTORY_EXTENSION: Record<RunBundle['inventory']['format'], string> = { ini: '.ini', yaml: '.yaml', json: '.json' };
/**
 * The callback plugin ships as a file next to src/ and dist/: both compile-time locations of this module are
 * two levels below the package root, so this resolves in the sources (tests) and in the build output alike.
 */
const CALLBACK_PLUGIN_DIR = fileURLToPath(new URL('../../callback', import.meta.url));
/** Where a project is checked out inside the run directory. */
const PROJECT_DIR = 'project';
/** The fd on which the callback plugin writes its JSON lines (stdin, stdout, stderr, then this pipe). */
const EVENTS_FD = 3;

/** Something about the bundle that stops the run before ansible starts; `message` goes into the run's log. */
class RunRefused extends Error {
  constructor(readonly conclusion: RunConclusion, readonly reason: RunReason, message: string) {
    super(message);
  }
}

/** The inside of `root` only: an absolute path, `..` or a symlink pointing out of the checkout is refused. */
async function projectPlaybookPath(root: string, relative: string): Promise<string> {
  const escape = new RunRefused('failed', 'bad_playbook', `baton: the playbook path ${JSON.stringify(relative)} is not inside the project`);
  if (path.isAbsolute(relative) || relative.split(/[\\/]/).includes('..')) throw escape;
  const real = await fs.realpath(path.join(root, relative)).catch(() => {
    throw new RunRefused('failed', 'bad_playbook', `baton: the playbook ${JSON.stringify(relative)} does not exist in the project at this commit`);
  });
  const realRoot = await fs.realpath(root);
  if (!real.startsWith(realRoot + path.sep)) throw escape;
  return real;
}

interface PreparedRun {
  /** what to spawn: ansible-playbook, or bwrap around it */
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
}

interface RunSettings {
  maxEventResBytes: number;
  sandbox?: Sandbox | undefined;
  /** a line of Baton's own for the run's log (a credential variable left out) */
  notice: (line: string) => void;
}

interface RunResources {
  agent?: OwnedSshAgent | undefined;
  fifos: SecretFifo[];
  /** records a pid in the run's pids.json as soon as it is known */
  recordPids: (pids: Partial<RunPids>) => void;
}

/** Names the credential FIFOs of a run: one per secret, each served once. */
function fifoServer(dir: string, res: RunResources) {
  let count = 0;
  return async (stem: string, secret: string) => {
    const served = await serveSecretThroughFifo(path.join(dir, `${stem}-${++count}.fifo`), secret);
    res.fifos.push(served);
    return served.path;
  };
}

interface PreparedCredentials {
  args: string[];
  /** variables of Baton's own for ansible (the agent's socket) */
  env: NodeJS.ProcessEnv;
  /** the env credentials' variables, which only the command inside the sandbox (or ansible) may see */
  variables: Record<string, string>;
}

async function prepareCredentials(dir: string, credentials: BundleCredential[], baseEnv: NodeJS.ProcessEnv, res: RunResources, fifo: ReturnType<typeof fifoServer>): Promise<PreparedCredentials> {
  const args: string[] = [];
  const env: NodeJS.ProcessEnv = {};
  const variables: Record<string, string> = {};
  for (const c of credentials) {
    switch (c.type) {
      case 'ssh_key':
        // One machine credential per run: a second key would only be offered after the first by the agent.
        if (res.agent) break;
        try {
          res.agent = await startOwnedSshAgent({ dir, env: baseEnv, privateKey: c.inputs.private_key, passphrase: c.inputs.passphrase });
        } catch (err) {
          if (err instanceof GitError) throw new RunRefused('error', 'bad_credential', `baton: ${err.reason}`);
          throw err;
        }
        res.recordPids({ agent_pid: res.agent.pid });
        env.SSH_AUTH_SOCK = res.agent.socket;
        if (c.inputs.username) args.push('--user', c.inputs.username);
        break;
      case 'become_password':
        args.push('--become-password-file', await fifo('become', c.inputs.password));
        if (c.inputs.method) args.push('--become-method', c.inputs.method);
        if (c.inputs.user) args.push('--become-user', c.inputs.user);
        break;
      case 'vault_password': {
        const file = await fifo('vault', c.inputs.password);
        if (c.inputs.vault_id) args.push('--vault-id', `${c.inputs.vault_id}@${file}`);
        else args.push('--vault-password-file', file);
        break;
      }
      case 'env':
        Object.assign(variables, c.inputs.variables);
        break;
    }
  }
  return { args, env, variables };
}

/**
 * The credential variables a run may set, each refused one named in the log (never its value): a name that is
 * no shell name, a reserved one (LD_AUDIT, PYTHONPATH… : stored before they were refused at create, or sent
 * by a forged bundle), one Baton sets itself for the run, or a value that no environment can hold.
 */
function acceptedVariables(variables: Record<string, string>, own: NodeJS.ProcessEnv, notice: (line: string) => void): Record<string, string> {
  const accepted: Record<string, string> = {};
  for (const [name, value] of Object.entries(variables)) {
    const why = !ENV_NAME_PATTERN.test(name)
      ? 'not a variable name'
      : isReservedEnvName(name)
        ? 'the name is reserved'
        : Object.hasOwn(own, name)
          ? 'Baton sets it for every run'
          : value.includes('\0')
            ? 'its value holds a NUL character'
            : undefined;
    if (why) notice(`baton: the env credential variable ${ENV_NAME_PATTERN.test(name) ? name : JSON.stringify(name.slice(0, 128))} was not set: ${why}`);
    else accepted[name] = value;
  }
  return accepted;
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Starts `command` with the credential variables in its environment, and with them nowhere else: not in argv
 * (anyone reads /proc/<pid>/cmdline), not on disk, not in the environment of the processes around it (/bin/sh,
 * chrt, bwrap run outside the sandbox, and the dynamic loader of each would honour LD_AUDIT=./x.so from the
 * project's checkout). A FIFO serves `export NAME='value'` lines once to this launcher, which runs with the
 * run's base environment, sources them and execs the command.
 */
const ENV_LAUNCHER = '. "$1"; shift; exec "$@"';

/**
 * ansible's remote temp directory for `ansible_connection=local`: `~user/.ansible/tmp` of the server's own user
 * (from the password database, not $HOME). The sandbox covers it with a private tmpfs, so a local task can
 * write it while the filesystem is read-only, and sees no other run's files there. Created beforehand (as
 * ansible itself would) because bubblewrap cannot create a mount point on a read-only root.
 */
async function localRemoteTemp(): Promise<string | undefined> {
  try {
    const dir = path.join(os.userInfo().homedir, '.ansible', 'tmp');
    fsSync.mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  } catch {
    return undefined; // no home directory: local tasks that need a temp directory fail in the sandbox
  }
}

async function prepareRun(bundle: RunBundle, dir: string, res: RunResources, settings: RunSettings): Promise<PreparedRun> {
  const home = path.join(dir, 'home');
  const controlDir = path.join(dir, 'cp');
  const localTemp = path.join(dir, 'tmp');
  // The few small files of a run are written synchronously: each await would wait behind whatever else the
  // server's event loop is doing, and twenty runs starting together would add up to the dispatch latency.
  for (const d of [home, controlDir, localTemp]) fsSync.mkdirSync(d, { mode: 0o700 });
  // An empty config of our own: neither /etc/ansible/ansible.cfg, ~/.ansible.cfg nor the project's ansible.cfg
  // can switch off our callback, pipelining or the control path.
  const config = path.join(dir, 'ansible.cfg');
  fsSync.writeFileSync(config, '', { mode: 0o600 });

  const inventory = path.join(dir, `inventory${INVENTORY_EXTENSION[bundle.inventory.format]}`);
  fsSync.writeFileSync(inventory, bundle.inventory.content, { mode: 0o600 });
  const extraVars = path.join(dir, 'extra-vars.json');
  fsSync.writeFileSync(extraVars, JSON.stringify(bundle.extra_vars ?? {}), { mode: 0o600 });

  let playbook: string;
  let cwd = dir;
  if (bundle.playbook.source === 'inline') {
    playbook = path.join(dir, 'playbook.yml');
    fsSync.writeFileSync(playbook, bundle.playbook.content, { mode: 0o600 });
  } else {
    const project = path.join(dir, PROJECT_DIR);
    const { git } = bundle.playbook;
    try {
      await checkoutCommit({ url: git.url, commit: git.commit, dir: project, auth: git.auth });
    } catch (err) {
      if (err instanceof GitError) throw new RunRefused('error', 'checkout_failed', `baton: cannot check out the project: ${err.reason}`);
      throw err;
    }
    playbook = await projectPlaybookPath(project, bundle.playbook.path);
    cwd = project; // relative paths in a project's playbooks are written against its root
  }

  // A minimal environment: nothing of the server's own (BATON_* keys, cloud credentials…) reaches ansible.
  const baseEnv: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    // Python's tempfile and ssh's helpers: the run directory, the one place the sandbox lets them write.
    TMPDIR: localTemp,
    // ansible-core refuses to start unless the locale's encoding is UTF-8.
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
  };
  const fifo = fifoServer(dir, res);
  const creds = await prepareCredentials(dir, bundle.credentials, baseEnv, res, fifo);
  // The environment of every process of the run's chain; env credentials add theirs inside (ENV_LAUNCHER).
  const env: NodeJS.ProcessEnv = {
    ...baseEnv,
    ...creds.env,
    ANSIBLE_CONFIG: config,
    ANSIBLE_STDOUT_CALLBACK: 'default',
    ANSIBLE_CALLBACKS_ENABLED: 'baton_events',
    ANSIBLE_CALLBACK_PLUGINS: CALLBACK_PLUGIN_DIR,
    BATON_EVENTS_FD: String(EVENTS_FD),
    BATON_MAX_RES_BYTES: String(settings.maxEventResBytes),
    // Events name files relative to the project (or the inline playbook's) root, never the run directory.
    BATON_PATH_ROOT: cwd,
    BATON_RUN_DIR: dir,
    ANSIBLE_NOCOLOR: 'True',
    ANSIBLE_PIPELINING: 'True',
    ANSIBLE_SSH_CONTROL_PATH_DIR: controlDir,
    ANSIBLE_LOCAL_TEMP: localTemp,
    ANSIBLE_RETRY_FILES_ENABLED: 'False',
    // Hosts are not known in advance and a run cannot answer a prompt; host identity is the inventory's
    // responsibility (pin keys with ansible_ssh_common_args). Keys seen go to /dev/null, not root's known_hosts.
    ANSIBLE_HOST_KEY_CHECKING: 'False',
    ANSIBLE_SSH_COMMON_ARGS: '-o UserKnownHostsFile=/dev/null',
    // A broken inventory must fail the run, not run against an implicit localhost; and only parsers, no scripts.
    ANSIBLE_INVENTORY_UNPARSED_FAILED: 'True',
    // yaml first: it takes only .yaml, .yml and .json files, so a shard's JSON inventory (inventory.yaml) is never read as INI.
    ANSIBLE_INVENTORY_ENABLED: 'yaml,ini',
    ANSIBLE_PYTHON_INTERPRETER: 'auto_silent',
    // Lines reach the pipe as ansible prints them, so the log streams live.
    PYTHONUNBUFFERED: '1',
  };

  const args = ['-i', inventory, '-e', `@${extraVars}`, ...creds.args];
  if (bundle.check) args.push('--check', '--diff');
  if (bundle.limit !== undefined) args.push('--limit', bundle.limit);
  if (bundle.forks !== undefined) args.push('--forks', String(bundle.forks));
  if (bundle.verbosity) args.push(`-${'v'.repeat(bundle.verbosity)}`);
  args.push('--', playbook);

  const variables = acceptedVariables(creds.variables, env, settings.notice);
  let inner = { command: 'ansible-playbook', args };
  if (Object.keys(variables).length > 0) {
    const exports = Object.entries(variables).map(([name, value]) => `export ${name}=${shellQuote(value)}\n`).join('');
    inner = { command: '/bin/sh', args: ['-c', ENV_LAUNCHER, 'baton-env', await fifo('env', exports), 'ansible-playbook', ...args] };
  }
  const sandbox = settings.sandbox;
  const command =
    sandbox?.mode === 'bwrap'
      ? sandboxed(inner.command, inner.args, {
          mode: 'bwrap',
          // The run directory's parent holds every other run's directory (its ssh-agent socket, its FIFOs); the
          // system temp directory holds checkouts and other private directories, and becomes a private, writable /tmp.
          hidden: [...sandbox.hidden, path.dirname(dir), os.tmpdir(), ...[await localRemoteTemp()].filter((d): d is string => d !== undefined)],
          writable: [dir],
          // pids.json tells the next start-up which processes to kill: the playbook must not be able to rewrite it.
          readable: [CALLBACK_PLUGIN_DIR, path.join(dir, PIDS_FILE)],
        })
      : inner;
  return { ...command, env, cwd };
}

const delay = (ms: number) => new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), ms).unref());

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
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
const OWN_GROUP = ['perl', '-e', 'setpgrp(0, 0) or die "baton: setpgid: $!\\n"; exec { $ARGV[0] } @ARGV or die "baton: cannot run $ARGV[0]: $!\\n"'];

interface AnsibleResult {
  exitCode: number | null;
  stoppedFor?: 'canceled' | 'timeout' | undefined;
}

/**
 * Spawns ansible-playbook in its own process group, streams its output into `stream`, stops it on request.
 * Rejects when it cannot start or when handling its output throws (the event consumer broke): the group is
 * stopped first, so nothing keeps running unwatched.
 */
function runAnsible(prepared: PreparedRun, stream: RunEventStream, opts: { signal?: AbortSignal | undefined; timeoutMs?: number | undefined; interruptGraceMs: number; terminateGraceMs: number; onSpawn?: ((pid: number, at: Date) => void) | undefined }): Promise<AnsibleResult> {
  return new Promise((resolve, reject) => {
    // stderr joins stdout in the shell, so parser errors land in the log in the order they were printed. Playbooks
    // run at the lowest CPU priority (SCHED_IDLE): twenty ansible processes starting at once must not starve the API
    // and dispatch. That works only inside one scheduling group: see hasControllingTerminal.
    // The kernel kills the chain (ansible itself, in the end: each step execs the next) if this server dies, even
    // of SIGKILL (`setpriv --pdeathsig`); what ansible forked is left to cleanupLeftoverRuns.
    const chain = ['setpriv', '--pdeathsig', 'KILL', '--', '/bin/sh', '-c', `exec chrt --idle 0 "$0" "$@" 2>&1`, prepared.command, ...prepared.args];
    // Either way the chain leads a process group of its own, which cancel signals.
    const ownSession = hasControllingTerminal();
    const [command, ...args] = ownSession ? chain : [...OWN_GROUP, ...chain];
    const child = spawn(command!, args, {
      cwd: prepared.cwd,
      env: prepared.env,
      detached: ownSession,
      stdio: ['ignore', 'pipe', 'ignore', 'pipe'],
    });
    if (child.pid !== undefined) opts.onSpawn?.(child.pid, new Date());
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
    child.stdout!.on('data', guarded((chunk) => stream.stdout(chunk)));
    (child.stdio[EVENTS_FD] as NodeJS.ReadableStream).on('data', guarded((chunk) => stream.ansibleEvents(chunk)));
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

/** A cancel, the server's shutdown (ShutdownAbort) or a lost lease (WorkerLostAbort): neither of the last two may look like a user's cancel. */
const canceledFor = (signal: AbortSignal | undefined): Pick<RunOutcome, 'conclusion' | 'reason'> =>
  isWorkerLostAbort(signal?.reason) ? { conclusion: 'error', reason: 'worker_lost' } : { conclusion: 'canceled', reason: isShutdownAbort(signal?.reason) ? 'shutdown' : 'canceled' };
const STOPPED_LINES: Partial<Record<RunReason, string>> = {
  shutdown: 'baton: the run was stopped: the server is shutting down',
  worker_lost: 'baton: the run was stopped: this worker lost its lease on the run',
};

function concludeFrom(result: AnsibleResult, stats: Record<string, HostStats> | undefined, signal: AbortSignal | undefined): Pick<RunOutcome, 'conclusion' | 'reason'> {
  if (result.stoppedFor === 'canceled') return canceledFor(signal);
  if (result.stoppedFor === 'timeout') return { conclusion: 'error', reason: 'timeout' };
  if (stats) {
    const hostFailed = Object.values(stats).some((s) => s.failed > 0 || s.unreachable > 0);
    return { conclusion: result.exitCode === 0 && !hostFailed ? 'succeeded' : 'failed' };
  }
  if (result.exitCode === 0) return { conclusion: 'succeeded' };
  // No stats means ansible stopped before running any play: a parser error, or ansible itself broke.
  if (result.exitCode === ANSIBLE_PARSER_ERROR_EXIT) return { conclusion: 'failed', reason: 'bad_playbook' };
  return { conclusion: 'error', reason: 'ansible_error' };
}

/** How event strings name the run directory: relative to the project (or inline playbook) root, else to the run dir. */
async function privatePathReplacements(dir: string, root: string): Promise<Array<[string, string]>> {
  const pairs: Array<[string, string]> = [];
  // The project does not exist yet: its real path is the run directory's real path joined with its name.
  const realDir = fsSync.realpathSync(dir);
  const realRoot = path.join(realDir, path.relative(dir, root));
  for (const form of new Set([root, realRoot, dir, realDir])) pairs.push([`${form}${path.sep}`, '']);
  for (const form of new Set([dir, realDir])) pairs.push([form, '.']);
  return pairs;
}

/** What broke, for the run's log: the error's own words, with the run directory's path left out. */
function describeFailure(err: unknown, dir: string | undefined): string {
  // Duck-typed: errors from Node's own modules may come from another realm (vm contexts, test runners).
  const text = typeof err === 'object' && err !== null && typeof (err as Error).message === 'string' ? (err as Error).message : String(err);
  const oneLine = text.replace(/\s+/g, ' ').trim() || 'unknown error';
  return dir ? oneLine.split(dir).join('<run dir>') : oneLine;
}

/** Stops and removes everything the run owned; each step is tried, whatever the others did. */
async function cleanUp(dir: string | undefined, resources: RunResources): Promise<string[]> {
  const problems: string[] = [];
  const attempt = async (what: string, step: () => Promise<unknown>) => {
    try {
      await step();
    } catch (err) {
      problems.push(`${what}: ${describeFailure(err, dir)}`);
    }
  };
  await Promise.all(resources.fifos.map((f) => attempt('closing a secret FIFO', () => f.close())));
  if (dir) await attempt('closing ssh control sockets', () => closeControlSockets(path.join(dir, 'cp'), { PATH: process.env.PATH }));
  if (resources.agent) await attempt('stopping the ssh-agent', () => resources.agent!.stop());
  if (dir) await attempt('removing the run directory', () => fs.rm(dir, { recursive: true, force: true }));
  return problems;
}

/**
 * Runs one bundle to its end. Never throws for anything the bundle, ansible or the host did: after the first
 * event (`status: running`) there is always exactly one final `status: finished` event, an unexpected failure
 * being `error` / `executor_error`. It throws only when `onEvent` itself throws on that final event.
 */
export async function runPlaybook(bundle: RunBundle, opts: RunPlaybookOptions): Promise<RunOutcome> {
  const stream = new RunEventStream(bundle.run_id, opts.onEvent, secretsOf(bundle), opts.now ?? (() => new Date()), {
    maxLogBytes: opts.maxLogBytes ?? DEFAULT_MAX_LOG_BYTES,
    maxEventResBytes: opts.maxEventResBytes ?? DEFAULT_MAX_EVENT_RES_BYTES,
  });
  let dir: string | undefined;
  // Who owns the run and which processes are its, for cleanupLeftoverRuns should this server die mid-run.
  const pids: RunPids = { server_pid: process.pid, server_started: processStartTime(process.pid) };
  const recordPids = (more: Partial<RunPids>) => {
    Object.assign(pids, more);
    try {
      if (dir) recordRunPids(dir, pids);
    } catch {
      // Only a crash's leftovers would miss it: never a reason to stop (or not stop) a run.
    }
  };
  const resources: RunResources = { fifos: [], recordPids };
  let result: AnsibleResult = { exitCode: null };
  let outcome: Pick<RunOutcome, 'conclusion' | 'reason'>;
  stream.status({ status: 'running' });
  try {
    dir = fsSync.mkdtempSync(path.join(opts.workRoot ?? os.tmpdir(), RUN_DIR_PREFIX));
    fsSync.chmodSync(dir, 0o700);
    recordRunPids(dir, pids);
    // Before anything can print a path: a checkout error names the project directory too.
    stream.replacePaths(await privatePathReplacements(dir, bundle.playbook.source === 'project' ? path.join(dir, PROJECT_DIR) : dir));
    const prepared = await prepareRun(bundle, dir, resources, {
      maxEventResBytes: opts.maxEventResBytes ?? DEFAULT_MAX_EVENT_RES_BYTES,
      sandbox: opts.sandbox,
      notice: (line) => stream.ownLogLine(line),
    });
    if (opts.signal?.aborted) {
      outcome = canceledFor(opts.signal);
    } else {
      result = await runAnsible(prepared, stream, {
        signal: opts.signal,
        timeoutMs: bundle.timeout_s === undefined ? undefined : bundle.timeout_s * 1000,
        interruptGraceMs: opts.interruptGraceMs ?? DEFAULT_INTERRUPT_GRACE_MS,
        terminateGraceMs: opts.terminateGraceMs ?? DEFAULT_TERMINATE_GRACE_MS,
        onSpawn: (pid, at) => {
          recordPids({ ansible_pgid: pid }); // the chain leads its own process group (a session of its own, or setpgid)
          opts.onSpawn?.(pid, at);
        },
      });
      stream.flush();
      outcome = concludeFrom(result, stream.stats, opts.signal);
    }
  } catch (err) {
    outcome = err instanceof RunRefused ? { conclusion: err.conclusion, reason: err.reason } : { conclusion: 'error', reason: 'executor_error' };
    const line = err instanceof RunRefused ? err.message : `baton: the executor failed: ${describeFailure(err, dir)}`;
    try {
      stream.ownLogLine(line);
    } catch {
      // The consumer is what broke; the final status below is its last chance.
    }
  }
  const problems = await cleanUp(dir, resources);
  try {
    for (const problem of problems) stream.ownLogLine(`baton: cleanup after the run failed: ${problem}`);
    if (result.stoppedFor === 'timeout') stream.ownLogLine(`baton: the run exceeded its timeout of ${bundle.timeout_s} s and was stopped`);
    else if (result.stoppedFor) stream.ownLogLine((outcome.reason && STOPPED_LINES[outcome.reason]) ?? 'baton: the run was canceled');
  } catch {
    // As above: only the final status still matters.
  }
  const stats = stream.stats ?? {};
  stream.status({ status: 'finished', conclusion: outcome.conclusion, ...(outcome.reason ? { reason: outcome.reason } : {}), exit_code: result.exitCode, stats });
  return { exitCode: result.exitCode, ...outcome, stats, logLines: stream.logLines };
}
