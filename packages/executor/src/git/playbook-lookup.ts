// Resolves a project's branch head and checks that a playbook path exists there, in one fetch: the commit a run
// records at submit time, and a clear refusal of a path that is missing or a directory before anything is queued.
import path from 'node:path';
import {
  checkBranchName,
  checkUrl,
  COMMIT,
  DEFAULT_GIT_TIMEOUT_MS,
  git,
  GitError,
  type GitAuth,
  withWorkspace,
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

async function fetchBranch(ws: Workspace, url: string, branch: string, filter: boolean): Promise<string> {
  // A fresh repository per attempt: a refused filtered fetch may leave partial-clone settings behind.
  const repo = path.join(ws.dir, filter ? 'repo' : 'repo-full');
  await git(ws, ['init', '-q', '--template=', repo], ws.dir);
  await git(ws, ['remote', 'add', 'origin', url], repo);
  // Trees only (blob:none): enough to list the path, without downloading the project's files.
  await git(
    ws,
    [
      'fetch',
      '-q',
      '--no-tags',
      '--depth',
      '1',
      ...(filter ? ['--filter=blob:none'] : []),
      'origin',
      `refs/heads/${branch}`,
    ],
    repo,
  );
  return repo;
}

/**
 * The commit at the head of `branch` of the repository at `url`, and what `path` is in that commit: a file, a
 * symlink, a directory (or submodule), or missing. One network operation (a shallow fetch of the branch, trees
 * only where the server allows it) in a private directory that is always removed; the same hardened
 * environment, credential handling, URL checks and timeout as every other git operation of Baton.
 */
export async function resolvePlaybookAtBranch(opts: {
  url: string;
  branch: string;
  path: string;
  auth?: GitAuth | undefined;
  timeoutMs?: number | undefined;
}): Promise<PlaybookAtBranch> {
  checkUrl(opts.url);
  checkBranchName(opts.branch);
  const playbook = normalizePlaybookPath(opts.path);
  return withWorkspace(opts.auth, opts.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS, async (ws) => {
    ws.env.GIT_LITERAL_PATHSPECS = '1';
    let repo: string;
    try {
      try {
        repo = await fetchBranch(ws, opts.url, opts.branch, true);
      } catch (err) {
        // Servers that do not know filters usually ignore them with a warning; one that refuses gets a plain fetch.
        if (!(err instanceof GitError) || err.code !== 'git_failed' || !FILTER_REFUSED.test(err.reason)) throw err;
        repo = await fetchBranch(ws, opts.url, opts.branch, false);
      }
    } catch (err) {
      if (err instanceof GitError && err.code === 'git_failed' && NO_SUCH_REF.test(err.reason)) {
        throw new GitError('branch_not_found', `branch ${opts.branch} not found in ${opts.url}`);
      }
      throw err;
    }
    const commit = (await git(ws, ['rev-parse', '--verify', '-q', 'FETCH_HEAD^{commit}'], repo)).trim();
    if (!COMMIT.test(commit)) throw new GitError('git_failed', `the fetch of branch ${opts.branch} gave no commit`);
    // -z: names unquoted and NUL-terminated; each record is "<mode> <type> <object>\t<path>".
    const out = await git(ws, ['ls-tree', '-z', commit, '--', playbook], repo);
    const record = out.split('\0').find((r) => r.slice(r.indexOf('\t') + 1) === playbook);
    return { commit, entry: record === undefined ? 'missing' : entryOfMode(record.split(' ')[0]!) };
  });
}
