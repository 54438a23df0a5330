// Everything a run needs before ansible-playbook starts, inside its private 0700 run directory: an empty config,
// the inventory and extra vars as files, the playbook (inline, or the project checked out at the bundle's
// commit), the credentials, a minimal environment with our callback plugin, and the command with its sandbox.
import fs from 'node:fs/promises';
import fsSync from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { KnownHostEntry, RunBundle } from '@baton/contracts';
import { GitError, checkoutCommit } from '../git/git.js';
import type { Sandbox, SandboxSpec } from '../sandbox/sandbox.js';
import { sshHostKeyOptions } from '../known-hosts/host-trust.js';
import { checkedFetchAddress, type FetchPolicy } from '../network/fetch-destination.js';
import { findRequirements, installRequirements, type InstalledRequirements } from './run-requirements.js';
import { RunRefused } from './run-conclusion.js';
import {
  acceptedVariables,
  fifoServer,
  prepareCredentials,
  type RunResources,
  withVariables,
} from './run-credentials.js';
import { PIDS_FILE } from './run-leftovers.js';
import type { LaunchCommand } from './run-launch.js';
import { EVENTS_FD } from './run-process.js';
import { CALLBACK_PLUGIN_DIR, PYTHON_LAUNCHER_DIR } from './package-files.js';

/** A run ready to start: ansible-playbook (or the wrapper that adds env credentials to it) and its sandbox. */
export interface PreparedRun extends LaunchCommand {
  sandbox: SandboxSpec;
}

const INVENTORY_EXTENSION: Record<RunBundle['inventory']['format'], string> = {
  ini: '.ini',
  yaml: '.yaml',
  json: '.json',
};
/** Where a project is checked out inside the run directory. */
export const PROJECT_DIR = 'project';

/** The inside of `root` only: an absolute path, `..` or a symlink pointing out of the checkout is refused. */
async function projectPlaybookPath(root: string, relative: string): Promise<string> {
  const escape = new RunRefused(
    'failed',
    'bad_playbook',
    `baton: the playbook path ${JSON.stringify(relative)} is not inside the project`,
  );
  if (path.isAbsolute(relative) || relative.split(/[\\/]/).includes('..')) throw escape;
  const real = await fs.realpath(path.join(root, relative)).catch(() => {
    throw new RunRefused(
      'failed',
      'bad_playbook',
      `baton: the playbook ${JSON.stringify(relative)} does not exist in the project at this commit`,
    );
  });
  const realRoot = await fs.realpath(root);
  if (!real.startsWith(realRoot + path.sep)) throw escape;
  return real;
}

export interface RunSettings {
  maxEventResBytes: number;
  sandbox?: Sandbox | undefined;
  /** a line of Baton's own for the run's log (a credential variable left out) */
  notice: (line: string) => void;
  /** the git server's keys ssh recorded on first contact while checking out the project */
  onProjectHostKeys: (learned: KnownHostEntry[]) => void;
  /** where Galaxy requirements are cached, one directory per project; unset: installed per run */
  requirementsCache?: string | undefined;
  /** how long installing a project's requirements may take */
  requirementsTimeoutMs: number;
  /** cancels the run while it is still being prepared (a requirements install) */
  signal?: AbortSignal | undefined;
  /** where the checkout and the Galaxy server may be fetched from */
  fetchPolicy: FetchPolicy;
}

/** The run's known_hosts file: ssh checks the inventory's hosts against it, and records first-seen keys in it. */
export const KNOWN_HOSTS_FILE = 'known_hosts';
const shellWord = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

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

/** A Galaxy server at a refused address fails the run before ansible-galaxy contacts it. */
async function checkGalaxyServer(serverUrl: string, policy: FetchPolicy): Promise<void> {
  let host: string;
  try {
    host = new URL(serverUrl).hostname;
  } catch {
    throw new RunRefused('failed', 'requirements', 'baton: the Galaxy server URL is not a URL');
  }
  const checked = await checkedFetchAddress(host, policy);
  if (!checked.ok) throw new RunRefused('failed', 'requirements', `baton: the Galaxy server is ${checked.reason}`);
}

/** Installs the requirements the checkout holds (none: undefined), in the project's cache when there is one. */
async function projectRequirements(
  source: Extract<RunBundle['playbook'], { source: 'project' }>,
  projectDir: string,
  runDir: string,
  settings: RunSettings,
): Promise<InstalledRequirements | undefined> {
  const files = await findRequirements(projectDir);
  if (files.length === 0) return undefined;
  if (source.galaxy) await checkGalaxyServer(source.galaxy.server_url, settings.fetchPolicy);
  const cacheKey = source.project_id && /^[A-Za-z0-9_-]+$/.test(source.project_id) ? source.project_id : undefined;
  return installRequirements({
    projectDir,
    files,
    cacheDir: settings.requirementsCache && cacheKey ? path.join(settings.requirementsCache, cacheKey) : undefined,
    runDir,
    env: {
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: path.join(runDir, 'home'),
      TMPDIR: path.join(runDir, 'tmp'),
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
    },
    galaxy: source.galaxy,
    timeoutMs: settings.requirementsTimeoutMs,
    sandbox: settings.sandbox,
    log: settings.notice,
    signal: settings.signal,
  });
}

/** A minimal environment: nothing of the server's own (BATON_* keys, cloud credentials…) reaches ansible. */
function runBaseEnv(dir: string): Record<'PATH' | 'HOME' | 'TMPDIR' | 'LANG' | 'LC_ALL', string> {
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: path.join(dir, 'home'),
    // Python's tempfile and ssh's helpers: the run directory, the one place the sandbox lets them write.
    TMPDIR: path.join(dir, 'tmp'),
    // ansible-core refuses to start unless the locale's encoding is UTF-8.
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
  };
}

// Lines reach the pipe as ansible prints them, so the log streams live.
const PYTHON_ENV = { PYTHONUNBUFFERED: '1' };

/**
 * What a run in `dir` will give ansible-playbook of what Python reads as it starts: the environment its launch's
 * Python waiter starts with (run-launch.ts), which the run's must then match.
 */
export function pythonStartEnv(dir: string): Record<string, string> {
  return { ...runBaseEnv(dir), ...PYTHON_ENV };
}

export async function prepareRun(
  bundle: RunBundle,
  dir: string,
  res: RunResources,
  settings: RunSettings,
): Promise<PreparedRun> {
  const baseEnv = runBaseEnv(dir);
  const home = baseEnv.HOME;
  const controlDir = path.join(dir, 'cp');
  const localTemp = baseEnv.TMPDIR;
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
  let requirements: InstalledRequirements | undefined;
  if (bundle.playbook.source === 'inline') {
    playbook = path.join(dir, 'playbook.yml');
    fsSync.writeFileSync(playbook, bundle.playbook.content, { mode: 0o600 });
  } else {
    const project = path.join(dir, PROJECT_DIR);
    const { git } = bundle.playbook;
    try {
      await checkoutCommit({
        url: git.url,
        commit: git.commit,
        dir: project,
        auth: git.auth,
        hostKeys: git.host_keys,
        onHostKeys: settings.onProjectHostKeys,
        // git and ssh in the sandbox too: no other run's directory, no data directory, no server home.
        sandbox: settings.sandbox,
        alsoHidden: [path.dirname(dir)],
        fetchPolicy: settings.fetchPolicy,
      });
    } catch (err) {
      if (err instanceof GitError)
        throw new RunRefused('error', 'checkout_failed', `baton: cannot check out the project: ${err.reason}`);
      throw err;
    }
    playbook = await projectPlaybookPath(project, bundle.playbook.path);
    cwd = project; // relative paths in a project's playbooks are written against its root
    requirements = await projectRequirements(bundle.playbook, project, dir, settings);
  }

  // Inline inventories have no stored keys: first contact accepts, and what ssh records dies with the run.
  const hostKeys = bundle.inventory.host_keys ?? { checking: 'accept_new' as const, known_hosts: '' };
  fsSync.writeFileSync(path.join(dir, KNOWN_HOSTS_FILE), hostKeys.known_hosts, { mode: 0o600 });
  const fifo = fifoServer(dir, res);
  const creds = await prepareCredentials(dir, bundle.credentials, baseEnv, res, fifo);
  // The environment of every process of the run's chain; env credentials add theirs inside (withVariables).
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
    // Host keys by the inventory's policy, against its stored keys only (never root's known_hosts). ssh decides by
    // the options below; `False` would make ansible put StrictHostKeyChecking=no first, and ssh's first value wins.
    ANSIBLE_HOST_KEY_CHECKING: hostKeys.checking === 'off' ? 'False' : 'True',
    ANSIBLE_SSH_COMMON_ARGS: sshHostKeyOptions(hostKeys.checking, path.join(dir, KNOWN_HOSTS_FILE), shellWord),
    // A broken inventory must fail the run, not run against an implicit localhost; and only parsers, no scripts.
    ANSIBLE_INVENTORY_UNPARSED_FAILED: 'True',
    // yaml first: it takes only .yaml, .yml and .json files, so a shard's JSON inventory (inventory.yaml) is never read as INI.
    ANSIBLE_INVENTORY_ENABLED: 'yaml,ini',
    ANSIBLE_PYTHON_INTERPRETER: 'auto_silent',
    // The project's Galaxy requirements, installed (or found in the cache) before the run.
    ...(requirements
      ? { ANSIBLE_COLLECTIONS_PATH: requirements.collectionsPath, ANSIBLE_ROLES_PATH: requirements.rolesPath }
      : {}),
    ...PYTHON_ENV,
  };

  const args = ['-i', inventory, '-e', `@${extraVars}`, ...creds.args];
  if (bundle.check) args.push('--check', '--diff');
  if (bundle.limit !== undefined) args.push('--limit', bundle.limit);
  if (bundle.forks !== undefined) args.push('--forks', String(bundle.forks));
  if (bundle.verbosity) args.push(`-${'v'.repeat(bundle.verbosity)}`);
  args.push('--', playbook);

  const variables = acceptedVariables(creds.variables, env, settings.notice);
  const inner = await withVariables('ansible-playbook', args, variables, fifo);
  return { ...inner, env, cwd, sandbox: await runSandbox(dir, settings.sandbox, requirements) };
}

/**
 * The sandbox of a run in `dir` (mode `off` without one). Also what a launch started ahead for the next run is given
 * (without requirements): the same settings give the same sandbox.
 */
export async function runSandbox(
  dir: string,
  sandbox: Sandbox | undefined,
  requirements?: InstalledRequirements,
): Promise<SandboxSpec> {
  const priority = sandbox?.priority;
  if (sandbox?.mode !== 'bwrap') return { mode: 'off', hidden: [], writable: [dir], priority };
  return {
    mode: 'bwrap',
    priority,
    // The run directory's parent holds every other run's directory (its ssh-agent socket, its FIFOs); the
    // system temp directory holds checkouts and other private directories, and becomes a private, writable /tmp.
    hidden: [
      ...sandbox.hidden,
      path.dirname(dir),
      os.tmpdir(),
      ...[await localRemoteTemp()].filter((d): d is string => d !== undefined),
    ],
    writable: [dir],
    // pids.json tells the next start-up which processes to kill: the playbook must not be able to rewrite it.
    // The requirements cache lies inside the data dir, which is hidden.
    readable: [
      CALLBACK_PLUGIN_DIR,
      PYTHON_LAUNCHER_DIR,
      path.join(dir, PIDS_FILE),
      ...(requirements ? [requirements.collectionsPath, requirements.rolesPath] : []),
    ],
  };
}
