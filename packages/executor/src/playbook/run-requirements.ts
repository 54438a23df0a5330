// A project's Ansible Galaxy requirements (roles/requirements.yml, collections/requirements.yml, a top-level
// requirements.yml), installed before the run's ansible-playbook starts, as AWX and Semaphore do. Installs land in
// a cache keyed by the project and the requirements' content hash: runs share it, and a commit that leaves the
// requirements alone reuses the last install. ansible-galaxy runs in a process group of its own (a timeout or a
// cancel kills it with everything it started), with an environment and a config of ours only, optionally in the
// sandbox; a galaxy server's token reaches it through a 0600 config file, never argv, and is masked in the log.
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { type Sandbox, sandboxed } from '../sandbox/sandbox.js';
import { canceledFor, RunRefused, type RunReason } from './run-conclusion.js';
import { ownGroupChain, type RunPriority } from './run-process.js';
import { REQUIREMENTS_COMPLETE_MARKER, touchRequirementsEntry } from './requirements-cache.js';

export type RequirementSection = 'roles' | 'collections';

export interface RequirementFile {
  /** relative to the project, e.g. 'roles/requirements.yml' */
  path: string;
  content: string;
  /** what ansible-galaxy installs from it: `role install` for roles, `collection install` for collections */
  sections: RequirementSection[];
}

export interface InstallRequirementsOptions {
  /** the checkout: ansible-galaxy runs here, so relative paths in the files mean what they mean to AWX */
  projectDir: string;
  files: RequirementFile[];
  /** the project's cache directory (e.g. <data dir>/requirements/<project id>); undefined → install into runDir/requirements, no reuse */
  cacheDir: string | undefined;
  /** the run's private 0700 directory (writable) */
  runDir: string;
  /** minimal base env: PATH, HOME, TMPDIR, LANG, LC_ALL (nothing else of the server's) */
  env: NodeJS.ProcessEnv;
  galaxy?: { server_url: string; token?: string | undefined } | undefined;
  /** for the whole install (every ansible-galaxy command together) */
  timeoutMs: number;
  /** mode 'bwrap': ansible-galaxy runs sandboxed, writing only the install target and the run directory */
  sandbox?: Sandbox | undefined;
  /** one line at a time into the run's log */
  log: (line: string) => void;
  /** abort kills the install's process group */
  signal?: AbortSignal | undefined;
}

export interface InstalledRequirements {
  /** for ANSIBLE_COLLECTIONS_PATH (it holds `ansible_collections/`) */
  collectionsPath: string;
  /** for ANSIBLE_ROLES_PATH */
  rolesPath: string;
  cacheHit: boolean;
  hash: string;
}

/** The reason of every refusal here: the run fails `requirements`. */
const REQUIREMENTS_REASON: RunReason = 'requirements';

/** Where ansible-galaxy's requirements live in a checkout, in the order they are installed. */
export const REQUIREMENT_CANDIDATES: ReadonlyArray<{ path: string; sections: RequirementSection[] | 'by-content' }> = [
  { path: 'roles/requirements.yml', sections: ['roles'] },
  { path: 'roles/requirements.yaml', sections: ['roles'] },
  { path: 'collections/requirements.yml', sections: ['collections'] },
  { path: 'collections/requirements.yaml', sections: ['collections'] },
  { path: 'requirements.yml', sections: 'by-content' },
  { path: 'requirements.yaml', sections: 'by-content' },
];

/** A requirements file larger than this is refused (they are a few hundred bytes). */
export const MAX_REQUIREMENTS_FILE_BYTES = 1024 * 1024;
/** ansible-galaxy output logged per install; the rest is dropped with a notice. */
export const MAX_REQUIREMENTS_LOG_BYTES = 1024 * 1024;
/** One logged line of ansible-galaxy's is cut here. */
export const MAX_REQUIREMENTS_LINE_CHARS = 4096;
/** Bumped when the layout of a cache entry changes, so old entries stop matching. */
const CACHE_FORMAT = 'baton-requirements-1';
const COMPLETE_MARKER = REQUIREMENTS_COMPLETE_MARKER;
/** After the process exited, how long its pipes may stay open (a grandchild that left the group) before we stop reading. */
const PIPE_GRACE_MS = 2000;
const MASK = '***';

const refuse = (message: string) => new RunRefused('failed', REQUIREMENTS_REASON, message);

/** The significant lines of a YAML text: no blank or comment lines, no document markers or directives. */
function significantLines(content: string): string[] {
  return content
    .split(/\r?\n/)
    .filter((l) => !/^\s*(#.*)?$/.test(l) && !/^(---|\.\.\.)(\s.*)?$/.test(l) && !l.startsWith('%'));
}

/**
 * What a top-level requirements.yml holds, read from its shape (the executor has no YAML parser, and ansible-galaxy
 * judges the rest): a list is the legacy list of roles; a mapping installs its `roles:` and `collections:`; a
 * mapping naming neither gets both commands, so ansible-galaxy says what is wrong with it.
 */
function sectionsByContent(lines: string[]): RequirementSection[] {
  const first = lines[0]!.trimStart();
  if (first.startsWith('-') || first.startsWith('[')) return ['roles'];
  const keys = first.startsWith('{')
    ? lines.join('\n').matchAll(/[{,]\s*["']?(roles|collections)["']?\s*:/g)
    : lines.map((l) => /^["']?(roles|collections)["']?\s*:/.exec(l)).filter((m) => m !== null);
  const found = new Set([...keys].map((m) => m[1]));
  const sections = (['roles', 'collections'] as const).filter((s) => found.has(s));
  return sections.length ? sections : ['roles', 'collections'];
}

/**
 * The requirement files of a checkout, in a fixed order; [] when none. A file with nothing but comments is left out
 * (ansible-galaxy would fail on it). Never follows a symlink out of the checkout: one that leads out, a file that
 * is not a regular file, too large or unreadable is refused (RunRefused, reason `requirements`).
 */
export async function findRequirements(projectDir: string): Promise<RequirementFile[]> {
  const realRoot = await fs.realpath(projectDir);
  const files: RequirementFile[] = [];
  for (const candidate of REQUIREMENT_CANDIDATES) {
    const name = JSON.stringify(candidate.path);
    const full = path.join(projectDir, candidate.path);
    try {
      await fs.lstat(full);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') continue;
      throw refuse(`baton: the requirements file ${name} cannot be read: ${code ?? 'unknown error'}`);
    }
    const real = await fs.realpath(full).catch(() => {
      throw refuse(`baton: the requirements file ${name} is a symlink that leads nowhere`);
    });
    if (!real.startsWith(realRoot + path.sep))
      throw refuse(`baton: the requirements file ${name} points outside the project`);
    let content: string;
    try {
      const stat = await fs.stat(real);
      if (!stat.isFile()) throw refuse(`baton: the requirements file ${name} is not a regular file`);
      if (stat.size > MAX_REQUIREMENTS_FILE_BYTES)
        throw refuse(`baton: the requirements file ${name} is larger than ${MAX_REQUIREMENTS_FILE_BYTES} bytes`);
      content = await fs.readFile(real, 'utf8');
    } catch (err) {
      if (err instanceof RunRefused) throw err;
      const code = (err as NodeJS.ErrnoException).code ?? 'unknown error';
      throw refuse(`baton: the requirements file ${name} cannot be read: ${code}`);
    }
    const lines = significantLines(content);
    if (!lines.length) continue;
    const sections = candidate.sections === 'by-content' ? sectionsByContent(lines) : candidate.sections;
    files.push({ path: candidate.path, content, sections });
  }
  return files;
}

/** sha256 hex over the files' paths, sections and contents and the galaxy server URL (not the token). */
export function requirementsHash(files: RequirementFile[], galaxyServerUrl?: string): string {
  const canonical = JSON.stringify([
    CACHE_FORMAT,
    galaxyServerUrl ?? null,
    files.map((f) => [f.path, f.sections, f.content]),
  ]);
  return createHash('sha256').update(canonical).digest('hex');
}

/**
 * Whether a requirement names a path rather than a remote source (`type: dir`, `src: ./roles/x.tar.gz`,
 * `name: collections/src/ns/coll`). Those contents come from the checkout, not the requirements text, so the
 * content hash cannot stand for them and they are installed for the run only. A guess from the text: a false
 * positive only costs the cache.
 */
export function namesLocalPaths(files: RequirementFile[]): boolean {
  for (const f of files) {
    if (/^\s*(?:-\s+)?type\s*:\s*["']?(?:dir|file|subdirs)["']?\s*(?:#.*)?$/m.test(f.content)) return true;
    for (const m of f.content.matchAll(/^\s*(?:-\s+)?(?:src|name|source)\s*:\s*["']?([^"'\s#,}]+)/gm)) {
      const value = m[1]!;
      if (value.includes('://') || /^[\w.-]+@[\w.-]+:/.test(value)) continue; // a URL, or scp-like git@host:path
      if (value.includes('/') || value.startsWith('.') || value.startsWith('~')) return true;
      if (/\.(tar\.gz|tgz|tar)$/.test(value)) return true;
    }
  }
  return false;
}

async function isDir(p: string): Promise<boolean> {
  return fs.lstat(p).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

/** A finished cache entry: a real directory with both install directories and the marker written last. */
async function isComplete(dir: string): Promise<boolean> {
  if (!(await isDir(dir)) || !(await isDir(path.join(dir, 'collections'))) || !(await isDir(path.join(dir, 'roles'))))
    return false;
  return fs.lstat(path.join(dir, COMPLETE_MARKER)).then(
    (s) => s.isFile(),
    () => false,
  );
}

/** A value that goes into the galaxy config file: one line, no spaces (an inline `;` comment would cut it). */
function checkConfigValue(what: string, value: string): void {
  if (!value || /[\s\p{Cc}]/u.test(value))
    throw refuse(`baton: the galaxy server ${what} must be one word without spaces or control characters`);
}

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(1))} s`;

/** Splits a stream of text into lines for the log: masked, each line bounded, the total bounded. */
class LineLog {
  private partial = '';
  private droppingRest = false;
  private bytes = 0;
  private cut = false;

  constructor(
    private readonly log: (line: string) => void,
    private readonly redact: (text: string) => string,
    /** extra characters kept beyond the line bound before masking, so a secret across the cut is still masked */
    private readonly slack: number,
  ) {}

  push(text: string): void {
    const pieces = (this.partial + text).split('\n');
    this.partial = pieces.pop()!;
    for (const piece of pieces) {
      if (this.droppingRest) this.droppingRest = false;
      else this.emit(piece);
    }
    if (this.partial.length > MAX_REQUIREMENTS_LINE_CHARS + this.slack) {
      if (!this.droppingRest) this.emit(this.partial);
      this.droppingRest = true;
      this.partial = '';
    }
  }

  end(): void {
    if (this.partial && !this.droppingRest) this.emit(this.partial);
    this.partial = '';
    this.droppingRest = false;
  }

  private emit(raw: string): void {
    let line = this.redact(raw.replace(/\r$/, '').replaceAll('\0', ''));
    if (!line.trim()) return;
    if (line.length > MAX_REQUIREMENTS_LINE_CHARS) line = `${line.slice(0, MAX_REQUIREMENTS_LINE_CHARS)} … (line cut)`;
    if (this.cut) return;
    const size = Buffer.byteLength(line) + 1;
    if (this.bytes + size > MAX_REQUIREMENTS_LOG_BYTES) {
      this.cut = true;
      this.log(`baton: ansible-galaxy printed more than ${MAX_REQUIREMENTS_LOG_BYTES} bytes; the rest is not logged`);
      return;
    }
    this.bytes += size;
    this.log(line);
  }
}

type GalaxyExit =
  | { kind: 'exited'; exitCode: number | null; signal: NodeJS.Signals | null }
  | { kind: 'timeout' }
  | { kind: 'aborted' };

interface GalaxyProcess {
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  signal: AbortSignal | undefined;
  lines: LineLog;
  priority: RunPriority | undefined;
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // The group is gone already, or (in the first milliseconds) not made yet: the process itself then.
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

/**
 * Runs one command the way run-process.ts runs ansible-playbook: a process group of its own (a session of its own
 * only when the server has a terminal), killed by the kernel if this server dies, at the runs' CPU priority, stderr
 * joined to stdout so lines keep their order. A timeout or an abort SIGKILLs the whole group.
 */
function runGalaxy(p: GalaxyProcess): Promise<GalaxyExit> {
  return new Promise((resolve, reject) => {
    const chain = ownGroupChain(p.command, p.args, { priority: p.priority });
    const child = spawn(chain.command, chain.args, {
      cwd: p.cwd,
      env: p.env,
      detached: chain.detached,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stopped: 'timeout' | 'aborted' | undefined;
    let settled = false;
    let graceTimer: NodeJS.Timeout | undefined;
    const stop = (why: 'timeout' | 'aborted') => {
      if (stopped || child.exitCode !== null || child.signalCode !== null) return;
      stopped = why;
      killGroup(child);
    };
    const onAbort = () => stop('aborted');
    p.signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => stop('timeout'), Math.max(0, p.timeoutMs));
    const decoders = [new StringDecoder('utf8'), new StringDecoder('utf8')];
    child.stdout!.on('data', (chunk: Buffer) => p.lines.push(decoders[0]!.write(chunk)));
    child.stderr!.on('data', (chunk: Buffer) => p.lines.push(decoders[1]!.write(chunk)));
    const finish = (result: GalaxyExit | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (graceTimer) clearTimeout(graceTimer);
      p.signal?.removeEventListener('abort', onAbort);
      for (const d of decoders) p.lines.push(d.end());
      p.lines.end();
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    let exit: { exitCode: number | null; signal: NodeJS.Signals | null } = { exitCode: null, signal: null };
    const result = (): GalaxyExit => (stopped ? { kind: stopped } : { kind: 'exited', ...exit });
    child.once('exit', (exitCode, signal) => {
      exit = { exitCode, signal };
      // Whatever it left in its group goes with it; one that left the group and holds the pipes is not waited for.
      killGroup(child);
      graceTimer = setTimeout(() => {
        child.stdout!.destroy();
        child.stderr!.destroy();
        finish(result());
      }, PIPE_GRACE_MS);
    });
    child.once('error', (err) => finish(err));
    child.once('close', () => finish(result()));
    if (p.signal?.aborted) onAbort();
  });
}

/** The refusal of a run stopped while installing: a cancel, the server's shutdown or a lost lease, told apart. */
function stoppedRefusal(abortReason: unknown): RunRefused {
  const verdict = canceledFor(abortReason);
  const why =
    verdict.reason === 'shutdown'
      ? 'the server is shutting down'
      : verdict.reason === 'worker_lost'
        ? 'this worker lost its lease on the run'
        : 'the run was canceled';
  return new RunRefused(
    verdict.conclusion,
    verdict.reason ?? 'canceled',
    `baton: installing requirements was stopped: ${why}`,
  );
}

/**
 * Installs (or reuses) the requirements. Logs a heading line, then ansible-galaxy's lines as they come. Throws
 * RunRefused('failed', 'requirements', 'baton: installing requirements failed (exit N)…' / '… timed out after N s')
 * on failure, and a RunRefused with the verdict of canceledFor when `signal` aborts; the caller logs the message
 * (runPlaybook does, for every refusal), so it is not logged here as well.
 */
export async function installRequirements(opts: InstallRequirementsOptions): Promise<InstalledRequirements> {
  const { files, runDir, galaxy } = opts;
  if (opts.signal?.aborted) throw stoppedRefusal(opts.signal.reason);
  if (galaxy) {
    checkConfigValue('URL', galaxy.server_url);
    if (galaxy.token !== undefined) checkConfigValue('token', galaxy.token);
  }
  const hash = requirementsHash(files, galaxy?.server_url);
  const names = files.map((f) => f.path).join(', ');
  const local = namesLocalPaths(files);
  const cacheDir = local ? undefined : opts.cacheDir;
  const paths = (dir: string): Omit<InstalledRequirements, 'cacheHit'> => ({
    collectionsPath: path.join(dir, 'collections'),
    rolesPath: path.join(dir, 'roles'),
    hash,
  });

  const final = cacheDir === undefined ? path.join(runDir, 'requirements') : path.join(cacheDir, hash);
  if (cacheDir !== undefined && (await isComplete(final))) {
    opts.log(`baton: requirements unchanged, using the cache (${hash.slice(0, 12)})`);
    // Retention removes entries unused for BATON_RETENTION_DAYS: this use counts (requirements-cache.ts).
    await touchRequirementsEntry(final);
    return { ...paths(final), cacheHit: true };
  }

  // The install target: a fresh directory beside the cache entry, renamed to it once complete.
  let target: string;
  if (cacheDir === undefined) {
    target = final;
    await fs.mkdir(target, { recursive: true, mode: 0o700 });
  } else {
    await fs.mkdir(cacheDir, { recursive: true, mode: 0o700 });
    target = await fs.mkdtemp(path.join(cacheDir, `${hash}.tmp-`)); // mode 0700
  }
  const work = path.join(runDir, 'galaxy');
  const config = path.join(runDir, 'galaxy.cfg');
  let keep = false;
  try {
    for (const d of ['collections', 'roles']) await fs.mkdir(path.join(target, d), { recursive: true, mode: 0o700 });
    const home = path.join(work, 'home');
    const tmp = path.join(work, 'tmp');
    const cache = path.join(work, 'cache');
    for (const d of [work, home, tmp, cache]) await fs.mkdir(d, { recursive: true, mode: 0o700 });
    // Our own config, always: never the project's ansible.cfg, ~/.ansible.cfg or /etc/ansible/ansible.cfg.
    const cfg = galaxy
      ? [
          '[galaxy]',
          'server_list = baton',
          '',
          '[galaxy_server.baton]',
          `url=${galaxy.server_url}`,
          ...(galaxy.token !== undefined ? [`token=${galaxy.token}`] : []),
          '',
        ].join('\n')
      : '';
    await fs.rm(config, { force: true });
    await fs.writeFile(config, cfg, { mode: 0o600, flag: 'wx' });

    const env: NodeJS.ProcessEnv = {
      ...opts.env,
      HOME: home,
      TMPDIR: tmp,
      ANSIBLE_CONFIG: config,
      ANSIBLE_LOCAL_TEMP: tmp,
      ANSIBLE_GALAXY_CACHE_DIR: cache,
      ANSIBLE_GALAXY_DISPLAY_PROGRESS: 'False',
      ANSIBLE_NOCOLOR: 'True',
      // Only what this install puts there counts as installed (and the "not a configured path" warning goes).
      ANSIBLE_COLLECTIONS_PATH: path.join(target, 'collections'),
      ANSIBLE_ROLES_PATH: path.join(target, 'roles'),
      PYTHONUNBUFFERED: '1',
      // Nobody can answer a prompt: a git source asking for a password or a host key fails instead of hanging.
      GIT_TERMINAL_PROMPT: '0',
      GIT_SSH_COMMAND: 'ssh -o BatchMode=yes',
    };

    const token = galaxy?.token;
    const replacements: Array<[string, string]> = [];
    for (const form of new Set([target, fsSync.realpathSync(target)])) replacements.push([form, '<requirements>']);
    const redact = (text: string) => {
      let out = token ? text.split(token).join(MASK) : text;
      for (const [from, to] of replacements) out = out.split(from).join(to);
      return out;
    };
    const lines = new LineLog(opts.log, redact, token?.length ?? 0);

    const where = cacheDir === undefined && local ? ' for this run only: they name paths in the project' : '';
    opts.log(`baton: installing requirements (${names})${where}`);
    const deadline = Date.now() + opts.timeoutMs;
    for (const file of files) {
      for (const section of file.sections) {
        const kind = section === 'roles' ? 'role' : 'collection';
        const args = [kind, 'install', '-r', file.path, '-p', path.join(target, section)];
        const sb = opts.sandbox;
        const run =
          sb?.mode === 'bwrap'
            ? sandboxed('ansible-galaxy', args, {
                mode: 'bwrap',
                // Other runs' directories (their sockets, FIFOs and checkouts) beside this one, and whatever the caller hides.
                hidden: [...sb.hidden, path.dirname(runDir)],
                writable: [target, runDir],
                readable: [opts.projectDir],
              })
            : { command: 'ansible-galaxy', args };
        const exit = await runGalaxy({
          ...run,
          cwd: opts.projectDir,
          env,
          timeoutMs: deadline - Date.now(),
          signal: opts.signal,
          lines,
          priority: opts.sandbox?.priority,
        });
        if (exit.kind === 'aborted') throw stoppedRefusal(opts.signal?.reason);
        if (exit.kind === 'timeout')
          throw refuse(`baton: installing requirements timed out after ${seconds(opts.timeoutMs)}`);
        if (exit.exitCode !== 0) {
          const status = exit.exitCode === null ? `signal ${exit.signal ?? 'unknown'}` : `exit ${exit.exitCode}`;
          throw refuse(
            `baton: installing requirements failed (${status}): ansible-galaxy ${kind} install -r ${file.path}`,
          );
        }
      }
    }
    if (cacheDir === undefined) {
      keep = true;
      return { ...paths(target), cacheHit: false };
    }

    await fs.writeFile(
      path.join(target, COMPLETE_MARKER),
      `${JSON.stringify({ hash, files: files.map((f) => f.path), installed_at: new Date().toISOString() })}\n`,
      { mode: 0o600 },
    );
    await publish(target, final);
    return { ...paths(final), cacheHit: false };
  } finally {
    // The token's file and ansible-galaxy's home go before the playbook starts: it may read the run directory.
    await fs.rm(config, { force: true });
    await fs.rm(work, { recursive: true, force: true });
    // A published install was renamed away; anything still here is a failed one, or the loser of a race.
    if (!keep) await fs.rm(target, { recursive: true, force: true });
  }
}

/**
 * Renames a complete install to its cache entry. When another run finished the same one first, theirs stays and
 * ours is left for the caller to drop; an entry without its marker (a broken one) is replaced.
 */
async function publish(tmp: string, final: string): Promise<void> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await fs.rename(tmp, final);
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST' && code !== 'ENOTDIR' && code !== 'EISDIR') throw err;
      if (await isComplete(final)) return; // another run won the race: use theirs
      await fs.rm(final, { recursive: true, force: true });
    }
  }
  if (await isComplete(final)) return;
  throw new Error(`cannot publish the requirements cache entry ${path.basename(final)}`);
}
