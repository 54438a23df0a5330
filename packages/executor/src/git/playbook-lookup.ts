// Resolves a project's branch head (or the branch, tag or commit a run names instead) and checks that a playbook path
// exists there: the commit a run records at submit time, and a clear refusal of a path that is missing or a
// directory, or of a ref the project does not have, before anything is queued.
import path from 'node:path';
import { branchNameProblem } from '@baton/contracts';
import {
  checkBranchName,
  checkUrl,
  COMMIT,
  DEFAULT_GIT_TIMEOUT_MS,
  fetchCommitById,
  git,
  GitError,
  type GitAuth,
  withWorkspace,
  type GitOperationOptions,
  type Workspace,
} from './git.js';

export type PlaybookEntry = 'file' | 'symlink' | 'directory' | 'missing';

export interface PlaybookAtBranch {
  commit: string;
  entry: PlaybookEntry;
}

/**
 * A playbook path relative to the project root, with `.` segments, doubled and trailing slashes dropped.
 * Absolute paths and `..` segments are refused (GitError 'bad_input'): a playbook never leaves its checkout.
 */
export function normalizePlaybookPath(p: string): string {
  if (p.startsWith('/'))
    throw new GitError('bad_input', `the playbook path must be relative to the project root: ${p}`);
  if (/[\0\\]/.test(p))
    throw new GitError('bad_input', 'the playbook path must not contain NUL or backslash characters');
  const segments = p.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) throw new GitError('bad_input', `the playbook path must not contain "..": ${p}`);
  if (segments.length === 0) throw new GitError('bad_input', 'the playbook path names no file');
  return segments.join('/');
}

/** git ls-tree modes: 100644/100755 blob, 120000 symlink, 040000 tree, 160000 a submodule (a commit, not a file). */
function entryOfMode(mode: string): PlaybookEntry {
  if (mode === '120000') return 'symlink';
  if (mode.startsWith('10')) return 'file';
  return 'directory';
}

const FILTER_REFUSED = /filter/i;
const NO_SUCH_REF = /couldn't find remote ref/i;
const HEX_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i;

/**
 * A branch or tag name as `git check-ref-format --allow-onelevel` accepts it (the rules project branches follow), or
 * a commit id; never one git could read as an option. Anything else is refused (GitError 'bad_input') before git runs.
 */
export function checkRefName(ref: string): void {
  const problem = branchNameProblem(ref);
  if (problem !== undefined)
    throw new GitError('bad_input', `not a branch, tag or commit id (${problem}): ${JSON.stringify(ref)}`);
}

/** What to look up: the head of `branch`, or `ref` (a branch, a tag or a commit id) when given. */
interface Target {
  url: string;
  branch: string;
  ref: string | undefined;
}

/**
 * Fetches the target into a fresh repository (a refused filtered fetch may leave partial-clone settings behind, so
 * each attempt gets its own) and answers the commit. Trees only (blob:none) where the server allows it: enough to
 * list the path, without downloading the project's files. A ref is a branch first (as `git checkout` and
 * `git clone --branch` take it), then a tag (annotated tags peeled to their commit), then a full commit id.
 */
async function fetchTarget(ws: Workspace, target: Target, filter: boolean): Promise<{ repo: string; commit: string }> {
  const repo = path.join(ws.dir, filter ? 'repo' : 'repo-full');
  const options = filter ? ['--filter=blob:none'] : [];
  await git(ws, ['init', '-q', '--template=', repo], ws.dir);
  await git(ws, ['remote', 'add', 'origin', target.url], repo);
  const peel = async (rev: string) => (await git(ws, ['rev-parse', '--verify', '-q', `${rev}^{commit}`], repo)).trim();
  /** The named ref shallowly, peeled to its commit; undefined when the remote has no such ref. */
  const named = async (name: string): Promise<string | undefined> => {
    try {
      await git(ws, ['fetch', '-q', '--no-tags', '--depth', '1', ...options, 'origin', name], repo);
    } catch (err) {
      if (err instanceof GitError && err.code === 'git_failed' && NO_SUCH_REF.test(err.reason)) return undefined;
      throw err;
    }
    return peel('FETCH_HEAD');
  };

  if (target.ref === undefined) {
    const commit = await named(`refs/heads/${target.branch}`);
    if (commit === undefined)
      throw new GitError('branch_not_found', `branch ${target.branch} not found in ${target.url}`);
    return { repo, commit };
  }
  const ref = target.ref;
  const commit =
    (await named(`refs/heads/${ref}`)) ??
    (await named(`refs/tags/${ref}`)) ??
    (HEX_ID.test(ref) && (await fetchCommitById(ws, 'origin', ref.toLowerCase(), repo, options))
      ? await peel(ref.toLowerCase())
      : undefined);
  if (commit === undefined) throw new GitError('ref_not_found', `ref ${ref} not found in ${target.url}`);
  return { repo, commit };
}

/**
 * The commit at the head of `branch` of the repository at `url` (or the commit `ref` names: a branch, a tag or a full
 * commit id), and what `path` is in that commit: a file, a symlink, a directory (or submodule), or missing. A shallow
 * fetch (trees only where the server allows it; one fetch for a branch head, one per kind of ref tried otherwise) in
 * a private directory that is always removed; the same hardened environment, credential handling, URL checks and
 * timeout as every other git operation of Baton.
 */
export async function resolvePlaybookAtBranch(
  opts: {
    url: string;
    branch: string;
    path: string;
    ref?: string | undefined;
    auth?: GitAuth | undefined;
    timeoutMs?: number | undefined;
  } & GitOperationOptions,
): Promise<PlaybookAtBranch> {
  checkUrl(opts.url);
  checkBranchName(opts.branch);
  if (opts.ref !== undefined) checkRefName(opts.ref);
  const playbook = normalizePlaybookPath(opts.path);
  const target: Target = { url: opts.url, branch: opts.branch, ref: opts.ref };
  return withWorkspace(
    opts.auth,
    opts.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS,
    async (ws) => {
      ws.env.GIT_LITERAL_PATHSPECS = '1';
      let found: { repo: string; commit: string };
      try {
        found = await fetchTarget(ws, target, true);
      } catch (err) {
        // Servers that do not know filters usually ignore them with a warning; one that refuses gets a plain fetch.
        if (!(err instanceof GitError) || err.code !== 'git_failed' || !FILTER_REFUSED.test(err.reason)) throw err;
        found = await fetchTarget(ws, target, false);
      }
      const { repo, commit } = found;
      if (!COMMIT.test(commit))
        throw new GitError('git_failed', `the fetch of ${opts.ref ?? opts.branch} gave no commit`);
      // -z: names unquoted and NUL-terminated; each record is "<mode> <type> <object>\t<path>".
      const out = await git(ws, ['ls-tree', '-z', commit, '--', playbook], repo);
      const record = out.split('\0').find((r) => r.slice(r.indexOf('\t') + 1) === playbook);
      return { commit, entry: record === undefined ? 'missing' : entryOfMode(record.split(' ')[0]!) };
    },
    opts,
  );
}
