import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
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
import { normalizePlaybookPath, resolvePlaybookAtBranch } from './playbook-lookup.js';

const SAFETY_TIMEOUT_MS = 20_000;

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
  const key = sshKeyPair(dir, 'key');
  let sshd: Awaited<ReturnType<typeof startSshd>>;
  let url: string;

  beforeAll(async () => {
    sshd = await startSshd(dir, [key.publicKey]);
    url = `ssh://root@127.0.0.1:${sshd.port}${repo.dir}`;
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

  it("passes on ssh's refusal without a key", async () => {
    await expectGitError(
      resolvePlaybookAtBranch({ url, branch: 'main', path: 'site.yml', timeoutMs: SAFETY_TIMEOUT_MS }),
      'git_failed',
      /Permission denied/,
    );
  });
});
