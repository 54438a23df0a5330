// Git, driven non-interactively for projects: resolve a branch head, check out one commit for a run.
// Every call gets a private 0700 directory (HOME, askpass script, agent socket, known_hosts) that is removed
// afterwards, a minimal environment (nothing of the server's own environment leaks into git or ssh), and a
// timeout that kills the whole process group. Secrets travel only in a child's environment or on stdin.
import { type ChildProcess, spawn } from 'node:child_process';
import { killProcessGroup, runCapped } from '../process/capped-process.js';
import fs from 'node:fs/promises';
import fsSync from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type GitAuth, GitError, type GitErrorCode, gitUrlProblem } from '@baton/contracts';
import { type HostTrust, learnedHostKeys, sshHostKeyOptions, withHostKeyReason } from '../known-hosts/host-trust.js';
import { checkedFetchAddress, type FetchPolicy, gitRemoteOf } from '../network/fetch-destination.js';
import type { Sandbox } from '../sandbox/sandbox.js';

export type { GitAuth, HostTrust };
/** Declared in contracts, so core can match it with instanceof. */
export { GitError, type GitErrorCode };

export const DEFAULT_GIT_TIMEOUT_MS = 60_000;
/** More than ls-remote, fetch or ssh-add print for one ref; a remote that floods us is cut off. */
const OUTPUT_CAP_BYTES = 256 * 1024;
const ALLOWED_PROTOCOLS = 'https:ssh:git:file';
const DEFAULT_TOKEN_USERNAME = 'x-access-token';

export const COMMIT = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

export interface Workspace {
  dir: string;
  env: NodeJS.ProcessEnv;
  secrets: string[];
  deadline: number;
  agent?: ChildProcess | undefined;
  /** git and ssh run in it, seeing only the workspace and `writable` of what the sandbox hides */
  sandbox?: (Sandbox & { writable: string[]; readable: string[] }) | undefined;
}

/**
 * How one git operation runs: host key trust, the bubblewrap sandbox (git and ssh then see neither the data
 * directory, the server user's home (~/.pgpass, ~/.ssh) nor the system temp directory with other operations' and
 * runs' files), and the destination policy for `url`.
 */
export interface GitOperationOptions extends HostTrust {
  url?: string | undefined;
  sandbox?: Sandbox | undefined;
  /** directories outside the workspace the operation writes (a checkout's target) */
  writable?: string[] | undefined;
  /**
   * hidden as well, but unlike `sandbox.hidden` a file:// repository inside them is still read (the run directories'
   * parent: a project in the system temp directory beside them is common in tests and small setups)
   */
  alsoHidden?: string[] | undefined;
  fetchPolicy?: FetchPolicy | undefined;
}

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function scrub(text: string, secrets: string[]): string {
  let out = text;
  for (const s of secrets) if (s) out = out.split(s).join('***');
  return out;
}

/** git's explanation, without ssh's chatter about known hosts, as short as one problem detail should be. */
function reasonFrom(stderr: string, secrets: string[]): string {
  const hostKey = withHostKeyReason(stderr);
  if (hostKey) return hostKey;
  const lines = scrub(stderr, secrets)
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('Warning: Permanently added'));
  const text = lines.join('; ') || 'git failed without saying why';
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

function remaining(ws: Workspace): number {
  const left = ws.deadline - Date.now();
  if (left <= 0) throw new GitError('timeout', 'git did not finish in time');
  return left;
}

function run(
  ws: Workspace,
  cmd: string,
  args: string[],
  opts: { cwd?: string; stdin?: string } = {},
): Promise<RunResult> {
  const timeoutMs = remaining(ws);
  return runCapped(cmd, args, {
    cwd: opts.cwd ?? ws.dir,
    env: ws.env,
    timeoutMs,
    maxOutputBytes: OUTPUT_CAP_BYTES,
    stdin: opts.stdin ?? '',
    sandbox: ws.sandbox,
  }).then(
    (r) => {
      if (r.killedFor === 'timeout')
        throw new GitError('timeout', `${cmd} did not finish within ${Math.round(timeoutMs / 1000)} s`);
      if (r.killedFor === 'output-too-large')
        throw new GitError('git_failed', `${cmd} printed more than ${OUTPUT_CAP_BYTES} bytes`);
      return { code: r.exitCode, stdout: r.stdout, stderr: r.stderr };
    },
    (e: Error) => {
      throw new GitError('git_failed', `cannot start ${cmd}: ${e.message}`);
    },
  );
}

export async function git(ws: Workspace, args: string[], cwd?: string): Promise<string> {
  const r = await run(ws, 'git', args, { cwd });
  if (r.code !== 0) throw new GitError('git_failed', reasonFrom(r.stderr, ws.secrets));
  return r.stdout;
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** A script that answers a prompt with the value of an environment variable: the secret never touches disk. */
async function writeAskpass(dir: string, name: string, body: string): Promise<string> {
  const file = path.join(dir, name);
  await fs.writeFile(file, `#!/bin/sh\n${body}\n`, { mode: 0o700 });
  return file;
}

/**
 * Starts the operation's own ssh-agent and resolves once its socket listens. It holds a decrypted key, so it
 * must not outlive the server: the kernel kills it when its parent (this process) dies, even of SIGKILL
 * (`setpriv --pdeathsig`, util-linux; setpriv then execs the agent in the same process). Debian installs
 * ssh-agent setgid, and exec'ing a setgid program clears the death signal: `--no-new-privs` makes the kernel
 * ignore the setgid bit, so the signal stays (the agent still forbids tracing itself, as it does anyway).
 */
function startAgent(ws: Workspace, socket: string): Promise<ChildProcess> {
  const agent = spawn('setpriv', ['--pdeathsig', 'KILL', '--no-new-privs', '--', 'ssh-agent', '-D', '-a', socket], {
    env: ws.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  ws.agent = agent;
  return new Promise((resolve, reject) => {
    let said = '';
    const timer = setTimeout(
      () => reject(new GitError('timeout', 'ssh-agent did not start in time')),
      Math.min(remaining(ws), 10_000),
    );
    // In the foreground the agent prints SSH_AUTH_SOCK=… once the socket is bound.
    agent.stdout!.on('data', (chunk: Buffer) => {
      said += chunk.toString('utf8');
      if (said.includes('SSH_AUTH_SOCK=')) {
        clearTimeout(timer);
        resolve(agent);
      }
    });
    agent.stderr!.resume();
    agent.on('error', (e) => {
      clearTimeout(timer);
      reject(new GitError('git_failed', `cannot start ssh-agent: ${e.message}`));
    });
    agent.on('exit', () => {
      clearTimeout(timer);
      reject(new GitError('git_failed', 'ssh-agent exited at start'));
    });
  });
}

async function loadSshKey(ws: Workspace, privateKey: string, passphrase: string | undefined): Promise<void> {
  const socket = path.join(ws.dir, 'agent.sock');
  await startAgent(ws, socket);
  ws.env.SSH_AUTH_SOCK = socket;
  const addEnv: NodeJS.ProcessEnv = { ...ws.env };
  if (passphrase !== undefined) {
    // ssh-add reads the key from stdin, so the passphrase comes from SSH_ASKPASS, which echoes an env var.
    // ssh-add asks again after a wrong passphrase ("Bad passphrase, try again…"): refuse then, or it asks forever.
    addEnv.SSH_ASKPASS = await writeAskpass(
      ws.dir,
      'ssh-askpass',
      'case "$1" in\n  Bad*) exit 1 ;;\n  *) printf "%s\\n" "$BATON_SSH_PASSPHRASE" ;;\nesac',
    );
    addEnv.SSH_ASKPASS_REQUIRE = 'force';
    addEnv.DISPLAY = 'none';
    addEnv.BATON_SSH_PASSPHRASE = passphrase;
  } else {
    // Without a passphrase, a key that needs one must fail rather than prompt.
    addEnv.SSH_ASKPASS_REQUIRE = 'never';
  }
  const key = privateKey.endsWith('\n') ? privateKey : `${privateKey}\n`;
  const r = await run({ ...ws, env: addEnv }, 'ssh-add', ['-q', '-'], { stdin: key });
  if (r.code !== 0)
    throw new GitError(
      'bad_credential',
      `the SSH key could not be loaded (not a private key, or a wrong passphrase): ${reasonFrom(r.stderr, ws.secrets)}`,
    );
}

/**
 * Runs `fn` in a fresh private workspace set up for `auth`; always stops the agent and removes the directory. ssh
 * checks the git server's key against `trust.hostKeys` (accept-new with nothing stored when not given); keys it
 * recorded on first contact go to `trust.onHostKeys`, whether `fn` succeeded or not.
 */
export async function withWorkspace<T>(
  auth: GitAuth | undefined,
  timeoutMs: number,
  fn: (ws: Workspace) => Promise<T>,
  trust: GitOperationOptions = {},
): Promise<T> {
  const pinned = trust.url !== undefined && trust.fetchPolicy ? await checkedRemote(trust.url, trust.fetchPolicy) : [];
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'baton-git-'));
  await fs.chmod(dir, 0o700);
  const home = path.join(dir, 'home');
  await fs.mkdir(home, { mode: 0o700 });
  const knownHosts = path.join(dir, 'known_hosts');
  await fs.writeFile(knownHosts, trust.hostKeys?.known_hosts ?? '', { mode: 0o600 });
  const ws: Workspace = {
    dir,
    deadline: Date.now() + timeoutMs,
    secrets: [],
    env: {
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: home,
      LANG: 'C',
      LC_ALL: 'C',
      GIT_TERMINAL_PROMPT: '0',
      GIT_ALLOW_PROTOCOL: ALLOWED_PROTOCOLS,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      // ssh reads the real user's ~/.ssh (not $HOME): -F /dev/null and IdentityFile=none keep the server's own
      // config and keys out; only the operation's agent, if any, offers a key.
      GIT_SSH_COMMAND: `ssh -F /dev/null -o BatchMode=yes -o IdentitiesOnly=no -o IdentityFile=none ${sshHostKeyOptions(trust.hostKeys?.checking ?? 'accept_new', knownHosts, shellQuote)}`,
      GIT_SSH_VARIANT: 'ssh',
      // Settings that must hold for every git command of the operation (a destination pinned to its checked address).
      GIT_CONFIG_COUNT: String(pinned.length),
      ...Object.fromEntries(
        pinned.flatMap(([k, v], i) => [
          [`GIT_CONFIG_KEY_${i}`, k],
          [`GIT_CONFIG_VALUE_${i}`, v],
        ]),
      ),
    },
    sandbox: sandboxOf(trust, dir),
  };
  try {
    if (auth?.kind === 'token') {
      ws.secrets.push(auth.token);
      ws.env.GIT_ASKPASS = await writeAskpass(
        dir,
        'git-askpass',
        'case "$1" in\n  Username*) printf "%s\\n" "$BATON_GIT_USERNAME" ;;\n  *) printf "%s\\n" "$BATON_GIT_TOKEN" ;;\nesac',
      );
      ws.env.BATON_GIT_USERNAME = auth.username || DEFAULT_TOKEN_USERNAME;
      ws.env.BATON_GIT_TOKEN = auth.token;
    } else if (auth?.kind === 'ssh_key') {
      if (auth.passphrase) ws.secrets.push(auth.passphrase);
      await loadSshKey(ws, auth.privateKey, auth.passphrase || undefined);
    }
    return await fn(ws);
  } finally {
    await stopAgent(ws);
    if (trust.onHostKeys && (trust.hostKeys?.checking ?? 'accept_new') === 'accept_new') {
      const learned = await learnedHostKeys(knownHosts, trust.hostKeys?.known_hosts ?? '');
      if (learned.length > 0) await trust.onHostKeys(learned);
    }
    await fs.rm(dir, { recursive: true, force: true });
  }
}

async function stopAgent(ws: Workspace): Promise<void> {
  if (!ws.agent) return;
  const exited = new Promise((resolve) => ws.agent!.once('close', resolve));
  killProcessGroup(ws.agent);
  if (ws.agent.exitCode === null && ws.agent.signalCode === null) await exited;
}

/** An ssh-agent owned by one operation (e.g. a playbook run), holding one key; `stop()` kills it. */
export interface OwnedSshAgent {
  socket: string;
  /** the agent's process id (also its process group's) */
  pid: number | undefined;
  stop(): Promise<void>;
}

/**
 * Starts an ssh-agent listening in `dir` (a private 0700 directory the caller removes) and loads `privateKey`
 * from stdin, so the key never touches disk. Throws GitError('bad_credential') when the key does not load.
 */
export async function startOwnedSshAgent(opts: {
  dir: string;
  env: NodeJS.ProcessEnv;
  privateKey: string;
  passphrase?: string | undefined;
  timeoutMs?: number | undefined;
}): Promise<OwnedSshAgent> {
  const ws: Workspace = {
    dir: opts.dir,
    env: { ...opts.env },
    secrets: opts.passphrase ? [opts.passphrase] : [],
    deadline: Date.now() + (opts.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS),
  };
  try {
    await loadSshKey(ws, opts.privateKey, opts.passphrase || undefined);
  } catch (err) {
    await stopAgent(ws);
    throw err;
  }
  return { socket: ws.env.SSH_AUTH_SOCK!, pid: ws.agent?.pid, stop: () => stopAgent(ws) };
}

/** Paths no git operation may read: what the caller hides, the server user's home, the system temp directory. */
function sandboxOf(opts: GitOperationOptions, workspace: string): Workspace['sandbox'] {
  if (!opts.sandbox || opts.sandbox.mode === 'off') return undefined;
  const home = os.userInfo().homedir;
  return {
    mode: opts.sandbox.mode,
    hidden: [...opts.sandbox.hidden, ...(opts.alsoHidden ?? []), ...(home && home !== '/' ? [home] : []), os.tmpdir()],
    writable: [workspace, ...(opts.writable ?? [])],
    readable: localRepository(opts.url, opts.sandbox.hidden),
  };
}

/**
 * A file:// repository is read where it is, unless it lies in what the caller hides (the data directory): such a
 * URL finds nothing there, as if the repository did not exist.
 */
function localRepository(url: string | undefined, hidden: string[]): string[] {
  if (url === undefined || gitRemoteOf(url)?.kind !== 'file') return [];
  let repo: string;
  try {
    repo = fsSync.realpathSync(decodeURIComponent(new URL(url).pathname));
  } catch {
    return []; // nothing there: git says so
  }
  const inside = (p: string) => {
    try {
      const real = fsSync.realpathSync(p);
      return repo === real || repo.startsWith(real + path.sep);
    } catch {
      return false;
    }
  };
  return hidden.some(inside) ? [] : [repo];
}

/**
 * Refuses a remote whose host resolves to a refused address (and, with denyPrivate, a local file:// repository);
 * answers git settings that keep the operation there: https is pinned to the checked address and never follows
 * a redirect. (ssh and git:// connect by name again; the check still stops names that point inside.)
 */
async function checkedRemote(url: string, policy: FetchPolicy): Promise<Array<[string, string]>> {
  const remote = gitRemoteOf(url);
  if (!remote) return [];
  if (remote.kind === 'file') {
    if (policy.denyPrivate)
      throw new GitError('refused_url', 'refused: file:// repositories are local (BATON_FETCH_DENY_PRIVATE=true)');
    return [];
  }
  const checked = await checkedFetchAddress(remote.host, policy);
  // A name that does not resolve is git's kind of failure (the server may be away), not a refused URL.
  if (!checked.ok) throw new GitError(checked.unresolved ? 'git_failed' : 'refused_url', `git URL ${checked.reason}`);
  if (remote.scheme !== 'https') return [];
  const host = remote.host.replace(/^\[|\]$/g, '');
  const address = checked.address.family === 6 ? `[${checked.address.address}]` : checked.address.address;
  return [
    ['http.followRedirects', 'false'],
    ['http.curloptResolve', `${host}:${remote.port}:${address}`],
  ];
}

export function checkUrl(url: string): void {
  const problem = gitUrlProblem(url);
  if (problem !== undefined) throw new GitError('refused_url', `git URL ${problem}`);
}

/** A branch name git could read as an option, or that holds whitespace, is refused before git runs. */
export function checkBranchName(branch: string): void {
  if (!branch || branch.startsWith('-') || /\s/.test(branch))
    throw new GitError('bad_input', `not a branch name: ${branch}`);
}

/** The commit at the head of `branch` in the remote repository at `url`. */
export async function resolveBranchHead(
  opts: {
    url: string;
    branch: string;
    auth?: GitAuth | undefined;
    timeoutMs?: number | undefined;
  } & GitOperationOptions,
): Promise<string> {
  checkUrl(opts.url);
  checkBranchName(opts.branch);
  const ref = `refs/heads/${opts.branch}`;
  return withWorkspace(
    opts.auth,
    opts.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS,
    async (ws) => {
      const out = await git(ws, ['ls-remote', '--heads', '--', opts.url, ref]);
      // ls-remote matches patterns against the tail of ref names: keep only the exact ref.
      const line = out.split('\n').find((l) => l.split('\t')[1] === ref);
      const commit = line?.split('\t')[0];
      if (!commit || !COMMIT.test(commit))
        throw new GitError('branch_not_found', `branch ${opts.branch} not found in ${opts.url}`);
      return commit;
    },
    opts,
  );
}

const NOT_OUR_REF = /not our ref/i;

/**
 * Fetches `commit` by id, shallow, from `remote` into the repository at `dir` (`options` go to every fetch, e.g. a
 * blob filter). Servers speaking protocol v2 (GitHub; git over https and file://) send any commit they have by id;
 * one that refuses an unadvertised commit (protocol v0, e.g. ssh without AcceptEnv GIT_PROTOCOL) gets a fetch of
 * every branch and tag instead, and the commit is looked for among them. False when the remote does not have it.
 */
export async function fetchCommitById(
  ws: Workspace,
  remote: string,
  commit: string,
  dir: string,
  options: string[] = [],
): Promise<boolean> {
  try {
    await git(ws, ['fetch', '-q', '--no-tags', '--depth', '1', ...options, '--', remote, commit], dir);
    return true;
  } catch (err) {
    if (!(err instanceof GitError) || err.code !== 'git_failed') throw err;
    // The server looked and has no such object: no point in fetching everything.
    if (NOT_OUR_REF.test(err.reason)) return false;
  }
  const everything = ['+refs/heads/*:refs/baton/heads/*', '+refs/tags/*:refs/baton/tags/*'];
  await git(ws, ['fetch', '-q', '--no-tags', ...options, '--', remote, ...everything], dir);
  // Not a promisor for this check: a partial clone would otherwise ask the server for the missing commit again.
  const found = await run(ws, 'git', ['-c', 'remote.origin.promisor=false', 'cat-file', '-e', `${commit}^{commit}`], {
    cwd: dir,
  });
  return found.code === 0;
}

/** Fetches exactly `commit` from `url` into `dir` (created if missing) and checks it out detached. */
export async function checkoutCommit(
  opts: {
    url: string;
    commit: string;
    dir: string;
    auth?: GitAuth | undefined;
    timeoutMs?: number | undefined;
  } & GitOperationOptions,
): Promise<void> {
  checkUrl(opts.url);
  if (!COMMIT.test(opts.commit)) throw new GitError('bad_input', `not a full commit id: ${opts.commit}`);
  await fs.mkdir(opts.dir, { recursive: true, mode: 0o700 });
  await withWorkspace(
    opts.auth,
    opts.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS,
    async (ws) => {
      // No templates: no sample hooks or config from the system's template directory.
      await git(ws, ['init', '-q', '--template=', '.'], opts.dir);
      if (!(await fetchCommitById(ws, opts.url, opts.commit, opts.dir)))
        throw new GitError('git_failed', `commit ${opts.commit} is not on any branch or tag of ${opts.url}`);
      await git(ws, ['-c', 'advice.detachedHead=false', 'checkout', '-q', '--detach', opts.commit], opts.dir);
      const head = (await git(ws, ['rev-parse', 'HEAD'], opts.dir)).trim();
      if (head !== opts.commit) throw new GitError('git_failed', `checked out ${head}, expected ${opts.commit}`);
    },
    { ...opts, writable: [...(opts.writable ?? []), opts.dir] },
  );
}
