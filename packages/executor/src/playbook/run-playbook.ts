// Runs ONE sealed run bundle with the real ansible-playbook (ARCHITECTURE.md, "Executing ansible-playbook"):
// a private 0700 run directory (always removed), the project checked out at the bundle's commit, secrets
// served off disk (ssh-agent, FIFOs), our callback plugin for structured events, a cancel that escalates
// SIGINT → SIGTERM → SIGKILL on ansible's own process group, and optionally the bubblewrap sandbox.
// This module orchestrates; the parts live beside it: run-preparation (directory, files, environment, command),
// run-credentials, run-process (spawn, stop) and run-conclusion (the pure rules for how a run ends).
import fs from 'node:fs/promises';
import fsSync from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LearnedHostKeys, RunBundle, RunEvent } from '@baton/contracts';
import { type Sandbox, sandboxMounts } from '../sandbox/sandbox.js';
import type { FetchPolicy } from '../network/fetch-destination.js';
import {
  canceledFor,
  concludeFrom,
  concludeThrown,
  RunRefused,
  type RunConclusion,
  type RunReason,
  type RunVerdict,
  stoppedLine,
} from './run-conclusion.js';
import type { RunResources } from './run-credentials.js';
import { type HostStats, RunEventStream } from './run-event-stream.js';
import { closeControlSockets, processStartTime, recordRunPids, RUN_DIR_PREFIX, type RunPids } from './run-leftovers.js';
import { KNOWN_HOSTS_FILE, prepareRun, PROJECT_DIR, pythonStartEnv, runSandbox } from './run-preparation.js';
import { confirmedByHosts, learnedHostKeys } from '../known-hosts/host-trust.js';
import { type AnsibleResult, runAnsible } from './run-process.js';
import { ansiblePythonLaunch, RunLaunch, type WarmLaunches } from './run-launch.js';
import { secretsOf } from './run-secrets.js';

export type { HostStats, RunConclusion, RunReason };
export { ShutdownAbort, WorkerLostAbort } from './run-conclusion.js';

export interface RunOutcome {
  /** ansible-playbook's exit code; null when it never started or was killed by a signal */
  exitCode: number | null;
  conclusion: RunConclusion;
  reason?: RunReason | undefined;
  /** per host, from playbook_on_stats; empty when ansible never got that far */
  stats: Record<string, HostStats>;
  /** how many lines the run's log holds */
  logLines: number;
  /** the log was cut at maxLogBytes (always set by runPlaybook) */
  outputTruncated?: boolean | undefined;
  /**
   * what failed while stopping the run's helpers (ssh-agent, control masters, secret FIFOs) and removing its directory,
   * after its final status: for the server's log, since the run's own log is complete by then
   */
  cleanupProblems?: string[] | undefined;
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
  /**
   * bytes of ansible output kept in the run's log (BATON_RUN_OUTPUT_LIMIT_MB, 100 MiB); the rest is dropped with a
   * notice and later events keep only their metadata, while the run goes on
   */
  maxLogBytes?: number | undefined;
  /** largest serialized `res` of one ansible event (256 KiB); a larger one becomes `{truncated: true, bytes}` */
  maxEventResBytes?: number | undefined;
  /** run ansible-playbook in the bubblewrap sandbox, hiding these paths too (off by default) */
  sandbox?: Sandbox | undefined;
  /** where a project's Galaxy requirements are cached (one directory per project); unset: installed for each run */
  requirementsCache?: string | undefined;
  /** how long installing a project's requirements may take (10 minutes) */
  requirementsTimeoutMs?: number | undefined;
  /** where the checkout and the Galaxy server may be fetched from (BATON_FETCH_DENY_PRIVATE) */
  fetchPolicy?: FetchPolicy | undefined;
  /**
   * called once ansible-playbook starts, with its process (group) id and the moment (dispatch latency is measured up
   * to here); `warm` when it started in a launch made ahead
   */
  onSpawn?: ((pid: number, at: Date, warm: boolean) => void) | undefined;
  /**
   * where the next run's launch is started ahead (its process chain and sandbox waiting for the command): each run
   * takes the waiting one if it fits and starts another once it ended. Unset: each run starts its own.
   */
  launches?: WarmLaunches | undefined;
  /**
   * when ansible-playbook is a Python script, run it in its launch's own Python, which (in a launch kept ahead) has
   * loaded ansible's libraries before the run came (BATON_RUN_PRELOAD; default true). false: a fresh ansible-playbook
   * for every run.
   */
  preloadPython?: boolean | undefined;
}

const DEFAULT_INTERRUPT_GRACE_MS = 10_000;
const DEFAULT_TERMINATE_GRACE_MS = 5_000;
export const DEFAULT_MAX_LOG_BYTES = 100 * 1024 * 1024;
export const DEFAULT_MAX_EVENT_RES_BYTES = 256 * 1024;
export const DEFAULT_REQUIREMENTS_TIMEOUT_MS = 10 * 60_000;

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
  const text =
    typeof err === 'object' && err !== null && typeof (err as Error).message === 'string'
      ? (err as Error).message
      : String(err);
  const oneLine = text.replace(/\s+/g, ' ').trim() || 'unknown error';
  return dir ? oneLine.split(dir).join('<run dir>') : oneLine;
}

/** A new private run directory, with the record of whose it is (cleanupLeftoverRuns reads it after a crash). */
function newRunDir(workRoot: string, pids: RunPids): string {
  const dir = fsSync.mkdtempSync(path.join(workRoot, RUN_DIR_PREFIX));
  fsSync.chmodSync(dir, 0o700);
  recordRunPids(dir, pids);
  return dir;
}

/** The Python waiter for a launch in `dir`, unless turned off or ansible-playbook is no Python script. */
const pythonLaunch = (dir: string, ahead: boolean, preload: boolean | undefined) =>
  preload === false ? undefined : ansiblePythonLaunch(pythonStartEnv(dir), ahead);

/** Starts the next run's launch ahead: a run directory of its own, the sandbox these settings give, no command yet. */
async function launchAhead(
  workRoot: string,
  sandbox: Sandbox | undefined,
  preload: boolean | undefined,
): Promise<RunLaunch> {
  const pids: RunPids = { server_pid: process.pid, server_started: processStartTime(process.pid) };
  const dir = newRunDir(workRoot, pids);
  try {
    const launch = new RunLaunch(dir, await runSandbox(dir, sandbox), pythonLaunch(dir, true, preload));
    if (launch.child.pid !== undefined) recordRunPids(dir, { ...pids, ansible_pgid: launch.child.pid });
    return launch;
  } catch (err) {
    fsSync.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
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
  if (dir)
    await attempt('closing ssh control sockets', () =>
      closeControlSockets(path.join(dir, 'cp'), { PATH: process.env.PATH }),
    );
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
  const stream = new RunEventStream(
    bundle.run_id,
    opts.onEvent,
    secretsOf(bundle),
    opts.now ?? (() => new Date()),
    {
      maxLogBytes: opts.maxLogBytes ?? DEFAULT_MAX_LOG_BYTES,
      maxEventResBytes: opts.maxEventResBytes ?? DEFAULT_MAX_EVENT_RES_BYTES,
    },
    { awaitSyncLine: true },
  );
  let dir: string | undefined;
  // Who owns the run and which processes are its, for cleanupLeftoverRuns should this server die mid-run.
  const pids: RunPids = { server_pid: process.pid, server_started: processStartTime(process.pid) };
  let pidsWritten = '';
  const recordPids = (more: Partial<RunPids>) => {
    Object.assign(pids, more);
    const text = JSON.stringify(pids);
    if (!dir || text === pidsWritten) return;
    try {
      recordRunPids(dir, pids);
      pidsWritten = text;
    } catch {
      // Only a crash's leftovers would miss it: never a reason to stop (or not stop) a run.
    }
  };
  const resources: RunResources = { fifos: [], recordPids };
  // Keys ssh recorded on first contact (accept_new), for the server to keep: the inventory's hosts, the git server.
  const learned: LearnedHostKeys = { inventory: [], project: [] };
  let result: AnsibleResult = { exitCode: null };
  let outcome: RunVerdict;
  const workRoot = opts.workRoot ?? os.tmpdir();
  // Runs with the same settings get the same sandbox; the mounts are compared again once the run is prepared.
  const launchKey = JSON.stringify([workRoot, opts.sandbox ?? null]);
  // Taken before anything else: its run directory becomes this run's.
  let ahead = opts.launches?.take(launchKey);
  stream.status({ status: 'running' });
  try {
    if (ahead) dir = ahead.dir;
    else {
      dir = newRunDir(workRoot, pids);
      pidsWritten = JSON.stringify(pids);
    }
    recordPids(ahead?.child.pid !== undefined ? { ansible_pgid: ahead.child.pid } : {});
    // Before anything can print a path: a checkout error names the project directory too.
    stream.replacePaths(
      await privatePathReplacements(dir, bundle.playbook.source === 'project' ? path.join(dir, PROJECT_DIR) : dir),
    );
    const prepared = await prepareRun(bundle, dir, resources, {
      maxEventResBytes: opts.maxEventResBytes ?? DEFAULT_MAX_EVENT_RES_BYTES,
      sandbox: opts.sandbox,
      notice: (line) => stream.ownLogLine(line),
      onProjectHostKeys: (keys) => void learned.project.push(...keys),
      requirementsCache: opts.requirementsCache,
      requirementsTimeoutMs: opts.requirementsTimeoutMs ?? DEFAULT_REQUIREMENTS_TIMEOUT_MS,
      fetchPolicy: opts.fetchPolicy ?? { denyPrivate: false },
      signal: opts.signal,
    });
    if (opts.signal?.aborted) {
      outcome = canceledFor(opts.signal.reason);
    } else {
      // A launch made ahead serves only if this run needs the very same sandbox (a project's requirements add mounts).
      const warm = ahead !== undefined && ahead.waiting && ahead.mounts === sandboxMounts(prepared.sandbox);
      const launch = warm ? ahead! : new RunLaunch(dir, prepared.sandbox, pythonLaunch(dir, false, opts.preloadPython));
      if (!warm) ahead?.discard({ removeDir: false });
      ahead = undefined;
      try {
        launch.give(prepared);
      } catch (err) {
        launch.discard({ removeDir: false }); // nothing was sent: it would wait for a command forever
        throw err;
      }
      if (launch.child.pid !== undefined) {
        // The chain leads its own process group (a session of its own, or setpgid).
        recordPids({ ansible_pgid: launch.child.pid });
        opts.onSpawn?.(launch.child.pid, new Date(), warm);
      }
      result = await runAnsible(launch.child, stream, {
        signal: opts.signal,
        timeoutMs: bundle.timeout_s === undefined ? undefined : bundle.timeout_s * 1000,
        interruptGraceMs: opts.interruptGraceMs ?? DEFAULT_INTERRUPT_GRACE_MS,
        terminateGraceMs: opts.terminateGraceMs ?? DEFAULT_TERMINATE_GRACE_MS,
      });
      stream.flush();
      // Only for an inventory that keeps keys, and only what the hosts confirm: the playbook can write the file.
      if (bundle.inventory.host_keys?.checking === 'accept_new')
        learned.inventory = await confirmedByHosts(
          await learnedHostKeys(path.join(dir, KNOWN_HOSTS_FILE), bundle.inventory.host_keys?.known_hosts ?? ''),
          { PATH: process.env.PATH ?? '/usr/bin:/bin' },
        );
      outcome = concludeFrom(result, stream.stats, opts.signal?.reason);
    }
  } catch (err) {
    outcome = concludeThrown(err);
    const line = err instanceof RunRefused ? err.message : `baton: the executor failed: ${describeFailure(err, dir)}`;
    try {
      stream.ownLogLine(line);
    } catch {
      // The consumer is what broke; the final status below is its last chance.
    }
  }
  // Unused (the run was canceled or failed before ansible): its processes go; the directory with the run's.
  ahead?.discard({ removeDir: false });
  try {
    const stopped = stoppedLine(result.stoppedFor, outcome, bundle.timeout_s);
    if (stopped) stream.ownLogLine(stopped);
  } catch {
    // As above: only the final status still matters.
  }
  const stats = stream.statsWithReasons() ?? {};
  const recorded = learned.inventory.length + learned.project.length > 0;
  let cleanupProblems: string[] = [];
  try {
    stream.status({
      status: 'finished',
      conclusion: outcome.conclusion,
      ...(outcome.reason ? { reason: outcome.reason } : {}),
      exit_code: result.exitCode,
      stats,
      ...(recorded ? { host_keys: learned } : {}),
      ...(stream.outputTruncated ? { output_truncated: true } : {}),
    });
  } finally {
    // After the final status, so the run's end reaches its followers without waiting for this (closing ssh control
    // masters alone takes milliseconds each); what fails here is the caller's to log.
    cleanupProblems = await cleanUp(dir, resources);
  }
  opts.launches?.prepare(launchKey, () => launchAhead(workRoot, opts.sandbox, opts.preloadPython));
  return {
    exitCode: result.exitCode,
    ...outcome,
    stats,
    logLines: stream.logLines,
    outputTruncated: stream.outputTruncated,
    ...(cleanupProblems.length ? { cleanupProblems } : {}),
  };
}
