// The Galaxy requirements files of a project at one commit, read without checking the project out: a shallow fetch
// of trees only (blob:none where the server allows it), then just those blobs. What a sync reports, before any run.
import path from 'node:path';
import { REQUIREMENT_CANDIDATES } from '../playbook/run-requirements.js';
import {
  checkUrl,
  COMMIT,
  DEFAULT_GIT_TIMEOUT_MS,
  fetchCommitById,
  git,
  type GitAuth,
  GitError,
  type GitOperationOptions,
  withWorkspace,
} from './git.js';

export interface RequirementsAtCommit {
  path: string;
  /** undefined when the file could not be read (`problem` says why) */
  content?: string | undefined;
  problem?: string | undefined;
}

/** Larger than any requirements file has reason to be; git's own output cap cuts it anyway. */
const MAX_BYTES = 200 * 1024;

export async function readRequirementsAtCommit(
  opts: {
    url: string;
    commit: string;
    auth?: GitAuth | undefined;
    timeoutMs?: number | undefined;
  } & GitOperationOptions,
): Promise<RequirementsAtCommit[]> {
  checkUrl(opts.url);
  if (!COMMIT.test(opts.commit)) throw new GitError('bad_input', `not a full commit id: ${opts.commit}`);
  return withWorkspace(
    opts.auth,
    opts.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS,
    async (ws) => {
      const repo = path.join(ws.dir, 'repo');
      await git(ws, ['init', '-q', '--template=', repo], ws.dir);
      await git(ws, ['remote', 'add', 'origin', opts.url], repo);
      let found: boolean;
      try {
        found = await fetchCommitById(ws, 'origin', opts.commit, repo, ['--filter=blob:none']);
      } catch (err) {
        if (!(err instanceof GitError) || err.code !== 'git_failed' || !/filter/i.test(err.reason)) throw err;
        found = await fetchCommitById(ws, 'origin', opts.commit, repo);
      }
      if (!found) throw new GitError('git_failed', `commit ${opts.commit} is not on any branch or tag of ${opts.url}`);
      const paths = REQUIREMENT_CANDIDATES.map((c) => c.path);
      // -z: each record is "<mode> <type> <object>\t<path>", NUL-terminated.
      const listing = await git(ws, ['ls-tree', '-z', '-r', opts.commit, '--', ...paths], repo);
      const out: RequirementsAtCommit[] = [];
      for (const record of listing.split('\0').filter(Boolean)) {
        const [meta, file] = [record.slice(0, record.indexOf('\t')), record.slice(record.indexOf('\t') + 1)];
        if (!paths.includes(file)) continue;
        const [mode, , oid] = meta.split(' ');
        if (!mode!.startsWith('10')) {
          out.push({ path: file, problem: 'not a regular file (a symlink or a submodule)' });
          continue;
        }
        const size = Number((await git(ws, ['cat-file', '-s', oid!], repo)).trim());
        if (size > MAX_BYTES) {
          out.push({ path: file, problem: `larger than ${MAX_BYTES} bytes` });
          continue;
        }
        out.push({ path: file, content: await git(ws, ['cat-file', 'blob', oid!], repo) });
      }
      return out.sort((a, b) => paths.indexOf(a.path) - paths.indexOf(b.path));
    },
    opts,
  );
}
