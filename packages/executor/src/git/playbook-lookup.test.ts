import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  createRepo,
  expectGitError,
  gitFirstOnPath,
  ownTmpdirForGitOperations,
  sshKeyPair,
  startSshd,
} from '../testing/index.js';
import { checkRefName, normalizePlaybookPath, resolvePlaybookAtBranch } from './playbook-lookup.js';

// Only a safety net: a v0 server's every-branch-and-tag fallback took over 20 s once on a slow 2-core machine
// under the whole suite's load.
const SAFETY_TIMEOUT_MS = 45_000;

// Each lookup works inside os.tmpdir(): pointing it at our own directory proves the private directory is removed.
const { root } = ownTmpdirForGitOperations('baton-playbook-lookup-test');

/** A project with a nested playbook, a directory, a symlink and a name with glob characters, committed on `main`. */
function project(name: string) {
  const repo = createRepo(root, name);
  fs.mkdirSync(path.join(repo.dir, 'plays', 'roles'), { recursive: true });
  fs.writeFileSync(path.join(repo.dir, 'plays', 'deploy.yml'), '- hosts: all\n  tasks: []\n');
  fs.writeFileSync(path.join(repo.dir, 'plays', 'roles', 'keep'), '');
  fs.writeFileSync(path.join(repo.dir, 'odd [1]*.yml'), '- hosts: all\n  tasks: []\n');
  fs.symlinkSync('plays/deploy.yml', path.join(repo.dir, 'link.yml'));
  repo.git('add', '-A');
  repo.git('commit', '-q', '-m', 'layout');
  return repo;
}

describe('resolvePlaybookAtBranch over file://', () => {
  const repo = project('file');

  it.each([
    ['site.yml', 'file'],
    ['plays/deploy.yml', 'file'],
    ['./plays//deploy.yml', 'file'],
    ['link.yml', 'symlink'],
    ['plays', 'directory'],
    ['plays/', 'directory'],
    ['plays/roles', 'directory'],
    ['odd [1]*.yml', 'file'],
    ['odd*', 'missing'],
    ['nope.yml', 'missing'],
    ['plays/nope.yml', 'missing'],
    ['site.yml/inner', 'missing'],
  ])('classifies %s as %s at the head of main', async (p, entry) => {
    expect(await resolvePlaybookAtBranch({ url: repo.url, branch: 'main', path: p })).toEqual({
      commit: repo.head('main'),
      entry,
    });
  });

  it('resolves another branch to its own head, where the file may differ', async () => {
    const head = repo.commit('feature/x');
    repo.git('rm', '-q', 'plays/deploy.yml');
    repo.git('commit', '-q', '-m', 'drop deploy');
    const feature = repo.head('feature/x');
    repo.git('checkout', '-q', 'main');
    expect(feature).not.toBe(head);
    expect(await resolvePlaybookAtBranch({ url: repo.url, branch: 'feature/x', path: 'plays/deploy.yml' })).toEqual({
      commit: feature,
      entry: 'missing',
    });
    expect(await resolvePlaybookAtBranch({ url: repo.url, branch: 'main', path: 'plays/deploy.yml' })).toEqual({
      commit: repo.head('main'),
      entry: 'file',
    });
  });

  it('names a missing branch', async () => {
    await expectGitError(
      resolvePlaybookAtBranch({ url: repo.url, branch: 'nope', path: 'site.yml' }),
      'branch_not_found',
      /branch nope not found/,
    );
  });

  it("passes on git's reason for a path that is not a repository", async () => {
    await expectGitError(
      resolvePlaybookAtBranch({ url: `file://${root}/none`, branch: 'main', path: 'site.yml' }),
      'git_failed',
      /not appear to be a git repository|not a git repository/,
    );
  });

  it.each([
    ['an absolute path', '/etc/passwd'],
    ['a parent segment', '../outside.yml'],
    ['a parent segment inside', 'plays/../../outside.yml'],
    ['no name at all', './'],
    ['a NUL byte', 'site\0.yml'],
  ])('refuses %s before running git', async (_what, p) => {
    await expectGitError(resolvePlaybookAtBranch({ url: repo.url, branch: 'main', path: p }), 'bad_input');
  });

  it('refuses a URL and a branch that git must never see', async () => {
    await expectGitError(
      resolvePlaybookAtBranch({ url: 'ext::sh -c touch% /tmp/pwned', branch: 'main', path: 'site.yml' }),
      'refused_url',
    );
    await expectGitError(
      resolvePlaybookAtBranch({ url: repo.url, branch: '--upload-pack=x', path: 'site.yml' }),
      'bad_input',
    );
  });

  it('works against a server that honours blob filters', async () => {
    const filtered = project('filtered');
    filtered.git('config', 'uploadpack.allowFilter', 'true');
    expect(await resolvePlaybookAtBranch({ url: filtered.url, branch: 'main', path: 'plays/deploy.yml' })).toEqual({
      commit: filtered.head(),
      entry: 'file',
    });
  });
});

/**
 * A project whose history the refs below point into: `old.yml` only in the first commit, `tagged.yml` only in the
 * second; `v1` (lightweight) and `v2` (annotated) tag them, `feature` is a branch of its own, `both` names a tag and
 * a branch at different commits, and `orphan` is a commit no branch or tag reaches any more.
 */
function refsProject(name: string) {
  const repo = project(name);
  const add = (file: string) => {
    fs.writeFileSync(path.join(repo.dir, file), '- hosts: all\n  tasks: []\n');
    repo.git('add', file);
    repo.git('commit', '-q', '-m', `add ${file}`);
    return repo.git('rev-parse', 'HEAD');
  };
  const rm = (file: string) => {
    repo.git('rm', '-q', file);
    repo.git('commit', '-q', '-m', `drop ${file}`);
    return repo.git('rev-parse', 'HEAD');
  };
  const first = add('old.yml');
  repo.git('tag', 'v1');
  rm('old.yml');
  const second = add('tagged.yml');
  repo.git('tag', '-a', '-m', 'release 2', 'v2');
  rm('tagged.yml');
  repo.git('tag', 'both');
  const feature = repo.commit('feature');
  repo.git('branch', 'both');
  repo.git('checkout', '-q', '-b', 'gone', 'main');
  const orphan = add('orphan.yml');
  repo.git('checkout', '-q', 'main');
  repo.git('branch', '-q', '-D', 'gone');
  return { repo, first, second, feature, orphan, main: repo.head('main') };
}

describe('resolvePlaybookAtBranch with a ref', () => {
  const r = refsProject('refs');
  const at = (ref: string, p = 'site.yml') =>
    resolvePlaybookAtBranch({ url: r.repo.url, branch: 'main', path: p, ref });

  it("resolves a branch other than the project's to its head", async () => {
    expect(r.feature).not.toBe(r.main);
    expect(await at('feature')).toEqual({ commit: r.feature, entry: 'file' });
  });

  it("resolves a lightweight tag to its commit, where the playbook is that commit's", async () => {
    expect(await at('v1', 'old.yml')).toEqual({ commit: r.first, entry: 'file' });
    expect(await at('v1', 'tagged.yml')).toEqual({ commit: r.first, entry: 'missing' });
    // …and not at the branch head, where old.yml is gone.
    expect(await resolvePlaybookAtBranch({ url: r.repo.url, branch: 'main', path: 'old.yml' })).toEqual({
      commit: r.main,
      entry: 'missing',
    });
  });

  it('peels an annotated tag to its commit, not the tag object', async () => {
    const tagObject = r.repo.git('rev-parse', 'v2');
    expect(tagObject).not.toBe(r.second);
    expect(await at('v2', 'tagged.yml')).toEqual({ commit: r.second, entry: 'file' });
  });

  it('fetches a full commit id by id, even one no branch or tag reaches', async () => {
    expect(await at(r.first, 'old.yml')).toEqual({ commit: r.first, entry: 'file' });
    expect(await at(r.orphan, 'orphan.yml')).toEqual({ commit: r.orphan, entry: 'file' });
    expect(await at(r.second.toUpperCase(), 'tagged.yml')).toEqual({ commit: r.second, entry: 'file' });
  });

  it('takes the branch when a name is a branch and a tag, as git checkout and git clone --branch do', async () => {
    expect(r.repo.git('rev-parse', 'refs/tags/both')).not.toBe(r.feature);
    expect(await at('both')).toEqual({ commit: r.feature, entry: 'file' });
  });

  it('answers ref_not_found for a name or a commit id the remote does not have', async () => {
    await expectGitError(at('nope'), 'ref_not_found', new RegExp(`^ref nope not found in ${r.repo.url}$`));
    await expectGitError(at('release/9'), 'ref_not_found', /ref release\/9 not found/);
    await expectGitError(at('0'.repeat(40)), 'ref_not_found', /not found/);
    await expectGitError(at(r.first.slice(0, 12)), 'ref_not_found', /not found/);
  });

  it.each([
    '-x',
    '--upload-pack=touch x',
    'a..b',
    'a b',
    'a~1',
    'a^',
    'a:b',
    'a?',
    'a*',
    'a[',
    'a\\b',
    '@',
    'a@{1}',
    '/a',
    'a/',
    'a//b',
    'a.',
    '.a',
    'a/.b',
    'a.lock',
    'a.lock/b',
    'a\tb',
    'a\x7f',
    '',
    'x'.repeat(256),
  ])('refuses the ref %j before running git', async (ref) => {
    await expectGitError(at(ref), 'bad_input', /not a branch, tag or commit id/);
  });
});

describe('checkRefName', () => {
  const gitAccepts = (ref: string) => {
    try {
      execFileSync('git', ['check-ref-format', '--allow-onelevel', ref], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  };
  const ours = (ref: string) => {
    try {
      checkRefName(ref);
      return true;
    } catch {
      return false;
    }
  };

  it.each([
    'main',
    'release/1.2',
    'v1.0.0',
    'feature/ä-ü',
    'a-b_c',
    'x@y',
    'a.b/c.d',
    'HEAD',
    'a..b',
    'a b',
    'a~',
    'a^{}',
    'a:b',
    'a?',
    'a*b',
    'a[b',
    'a\\b',
    '@',
    'a@{u}',
    '/a',
    'a/',
    'a//b',
    'a.',
    '.a',
    'a/.b',
    'a.lock',
    'a.lock/b',
    'a\u0001b',
    'a\x7fb',
  ])('agrees with git check-ref-format --allow-onelevel on %j', (ref) => {
    expect(ours(ref)).toBe(gitAccepts(ref));
  });

  it('refuses what git would read as an option, which check-ref-format alone accepts', () => {
    // (git takes "-x" itself for an option; as the last part of a full ref name it is a valid name.)
    expect(gitAccepts('refs/heads/-x')).toBe(true);
    expect(ours('-x')).toBe(false);
    expect(ours('--upload-pack=x')).toBe(false);
  });
});

describe('normalizePlaybookPath', () => {
  it.each([
    ['site.yml', 'site.yml'],
    ['./a//b/./c.yml', 'a/b/c.yml'],
    ['dir/', 'dir'],
  ])('%s → %s', (given, expected) => {
    expect(normalizePlaybookPath(given)).toBe(expected);
  });
});

describe('a server that refuses filters', () => {
  const repo = project('refusing');
  const spyDir = path.join(root, 'refusing-bin');
  const spyLog = path.join(root, 'refusing.log');
  const refuse = path.join(root, 'refuse-filters');
  // A `git` first on PATH that logs every fetch and, while `refuse` exists, fails a filtered one the way a refusing server does.
  gitFirstOnPath(spyDir, [
    'case "$*" in',
    `  *fetch*--filter=*) echo "fetch-filtered" >> '${spyLog}'`,
    `    if [ -e '${refuse}' ]; then echo "fatal: server does not support filter" >&2; exit 128; fi ;;`,
    `  *fetch*) echo "fetch-plain" >> '${spyLog}' ;;`,
    'esac',
  ]);
  afterEach(() => {
    fs.rmSync(spyLog, { force: true });
    fs.rmSync(refuse, { force: true });
  });

  it('falls back to a plain shallow fetch', async () => {
    fs.writeFileSync(refuse, '');
    expect(await resolvePlaybookAtBranch({ url: repo.url, branch: 'main', path: 'link.yml' })).toEqual({
      commit: repo.head(),
      entry: 'symlink',
    });
    expect(fs.readFileSync(spyLog, 'utf8')).toBe('fetch-filtered\nfetch-plain\n');
  });

  it('falls back once for a ref, and keeps to plain fetches for the kinds of ref it then tries', async () => {
    repo.git('tag', 'v-refusing');
    fs.writeFileSync(refuse, '');
    expect(
      await resolvePlaybookAtBranch({ url: repo.url, branch: 'main', path: 'site.yml', ref: 'v-refusing' }),
    ).toEqual({ commit: repo.head(), entry: 'file' });
    // refs/heads/v-refusing refused with the filter, then without it: missing; refs/tags/v-refusing: found.
    expect(fs.readFileSync(spyLog, 'utf8')).toBe('fetch-filtered\nfetch-plain\nfetch-plain\n');
  });

  it('does not fetch twice for a failure that is not about filters', async () => {
    await expectGitError(
      resolvePlaybookAtBranch({ url: repo.url, branch: 'nope', path: 'site.yml' }),
      'branch_not_found',
    );
    expect(fs.readFileSync(spyLog, 'utf8')).toBe('fetch-filtered\n');
  });
});

describe('resolvePlaybookAtBranch over ssh from a real sshd on loopback', () => {
  const dir = path.join(root, 'ssh');
  fs.mkdirSync(dir, { recursive: true });
  const repo = project('ssh-repo');
  const r = refsProject('ssh-refs');
  const key = sshKeyPair(dir, 'key');
  let sshd: Awaited<ReturnType<typeof startSshd>>;
  let url: string;
  let refsUrl: string;

  beforeAll(async () => {
    sshd = await startSshd(dir, [key.publicKey]);
    url = `ssh://root@127.0.0.1:${sshd.port}${repo.dir}`;
    refsUrl = `ssh://root@127.0.0.1:${sshd.port}${r.repo.dir}`;
  });
  afterAll(async () => {
    await sshd?.stop();
  });

  it('fetches with the key from its own agent and classifies the path', async () => {
    const auth = { kind: 'ssh_key' as const, privateKey: key.privateKey };
    expect(
      await resolvePlaybookAtBranch({
        url,
        branch: 'main',
        path: 'plays/deploy.yml',
        auth,
        timeoutMs: SAFETY_TIMEOUT_MS,
      }),
    ).toEqual({ commit: repo.head(), entry: 'file' });
    expect(
      await resolvePlaybookAtBranch({ url, branch: 'main', path: 'plays', auth, timeoutMs: SAFETY_TIMEOUT_MS }),
    ).toEqual({ commit: repo.head(), entry: 'directory' });
  });

  it('resolves refs from this sshd, which speaks protocol v0: a commit id through the every-branch-and-tag fallback', async () => {
    const auth = { kind: 'ssh_key' as const, privateKey: key.privateKey };
    const at = (ref: string, p: string) =>
      resolvePlaybookAtBranch({ url: refsUrl, branch: 'main', path: p, ref, auth, timeoutMs: SAFETY_TIMEOUT_MS });
    expect(await at('v2', 'tagged.yml')).toEqual({ commit: r.second, entry: 'file' });
    expect(await at('feature', 'site.yml')).toEqual({ commit: r.feature, entry: 'file' });
    // Only the tags v1 and v2 reach these commits, which v0 will not send by id.
    expect(await at(r.first, 'old.yml')).toEqual({ commit: r.first, entry: 'file' });
    expect(await at(r.second, 'tagged.yml')).toEqual({ commit: r.second, entry: 'file' });
    // A v0 server hands out only what its refs reach: the orphan commit is not found here.
    await expectGitError(at(r.orphan, 'orphan.yml'), 'ref_not_found', /not found/);
    await expectGitError(at('0'.repeat(40), 'site.yml'), 'ref_not_found', /not found/);
  }, 180_000);

  it("passes on ssh's refusal without a key", async () => {
    await expectGitError(
      resolvePlaybookAtBranch({ url, branch: 'main', path: 'site.yml', timeoutMs: SAFETY_TIMEOUT_MS }),
      'git_failed',
      /Permission denied/,
    );
  });
});
