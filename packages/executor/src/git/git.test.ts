import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import {
  createRepo,
  expectGitError,
  freePort,
  gitFirstOnPath,
  ownTmpdirForGitOperations,
  sshKeyPair,
  startSshd,
} from '../testing/index.js';
import { checkoutCommit, resolveBranchHead } from './git.js';

const SAFETY_TIMEOUT_MS = 20_000;

// Every operation works inside os.tmpdir(): pointing it at a directory of our own lets us prove that each one
// removes its private directory (agent socket, askpass script, known_hosts) and leaves no process behind.
const { root, opsTmp } = ownTmpdirForGitOperations('baton-git-test');
afterEach(() => {
  const processes = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
  expect(processes.split('\n').filter((line) => line.includes(opsTmp))).toEqual([]);
});

describe('git over file://', () => {
  const repo = createRepo(path.join(root, 'file'));

  it('resolves the head of a branch', async () => {
    expect(await resolveBranchHead({ url: repo.url, branch: 'main' })).toBe(repo.head());
    const featureHead = repo.commit('feature/x');
    expect(featureHead).not.toBe(repo.head('main'));
    expect(await resolveBranchHead({ url: repo.url, branch: 'feature/x' })).toBe(featureHead);
  });

  it('matches the branch exactly, not a branch that merely ends with the same name', async () => {
    const nested = createRepo(path.join(root, 'nested'));
    nested.git('branch', 'release/main');
    nested.git('branch', '-m', 'main', 'trunk');
    await expectGitError(
      resolveBranchHead({ url: nested.url, branch: 'main' }),
      'branch_not_found',
      /branch main not found/,
    );
  });

  it('names a missing branch', async () => {
    await expectGitError(
      resolveBranchHead({ url: repo.url, branch: 'nope' }),
      'branch_not_found',
      /branch nope not found/,
    );
  });

  it("passes on git's reason for a path that is not a repository", async () => {
    await expectGitError(
      resolveBranchHead({ url: `file://${root}/does-not-exist`, branch: 'main' }),
      'git_failed',
      /does not appear to be a git repository|not a git repository/,
    );
  });

  it.each([
    ['a remote helper (ext::)', 'ext::sh -c touch% /tmp/pwned'],
    ['a remote helper (fd::)', 'fd::3'],
    ['plain http', 'http://127.0.0.1/repo.git'],
    ['ftp', 'ftp://example.com/repo.git'],
    ['a local path without file://', '/srv/repo.git'],
    ['a relative path', './repo'],
    ['an option', '--upload-pack=touch /tmp/pwned'],
    ['a password in the URL', 'https://user:secret@example.com/repo.git'],
    ['an ssh host that is an option', 'ssh://-oProxyCommand=touch/repo'],
    ['a file URL with a host', 'file://server/repo'],
  ])('refuses %s before running git', async (_what, url) => {
    const err = await expectGitError(resolveBranchHead({ url, branch: 'main' }), 'refused_url');
    expect(err.reason).not.toContain('secret');
  });

  it('refuses a branch that would be read as an option', async () => {
    await expectGitError(resolveBranchHead({ url: repo.url, branch: '--upload-pack=x' }), 'bad_input');
  });

  it('checks out an older commit, detached, and nothing newer', async () => {
    const older = repo.head();
    const newer = repo.commit();
    const dir = path.join(root, 'checkout-old');
    await checkoutCommit({ url: repo.url, commit: older, dir });
    expect(execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim()).toBe(older);
    // Only the one commit was fetched: the newer one is not in the checkout.
    expect(() => execFileSync('git', ['cat-file', '-e', newer], { cwd: dir, stdio: 'ignore' })).toThrow();
    const content = fs.readFileSync(path.join(dir, 'site.yml'), 'utf8');
    expect(content).toBe(execFileSync('git', ['show', `${older}:site.yml`], { cwd: repo.dir, encoding: 'utf8' }));
    // No template directory: not even sample hooks were copied in.
    expect(fs.existsSync(path.join(dir, '.git', 'hooks'))).toBe(false);
  });

  it('refuses a commit that is not a full id, and one the remote does not have', async () => {
    await expectGitError(
      checkoutCommit({ url: repo.url, commit: 'main', dir: path.join(root, 'co-ref') }),
      'bad_input',
    );
    await expectGitError(
      checkoutCommit({ url: repo.url, commit: '0'.repeat(40), dir: path.join(root, 'co-missing') }),
      'git_failed',
      /is not on any branch or tag/,
    );
  });

  it('checks out commits that only a tag reaches, lightweight or annotated', async () => {
    const tagged = createRepo(path.join(root, 'tagged'));
    const light = tagged.commit('side');
    tagged.git('tag', 'light');
    const annotated = tagged.commit('side');
    tagged.git('tag', '-a', '-m', 'release', 'annotated');
    tagged.git('checkout', '-q', 'main');
    tagged.git('branch', '-q', '-D', 'side');
    for (const [commit, dir] of [
      [light, 'co-light'],
      [annotated, 'co-annotated'],
    ] as const) {
      await checkoutCommit({ url: tagged.url, commit, dir: path.join(root, dir) });
      expect(execFileSync('git', ['rev-parse', 'HEAD'], { cwd: path.join(root, dir), encoding: 'utf8' }).trim()).toBe(
        commit,
      );
    }
  });
});

describe('token auth', () => {
  const repo = createRepo(path.join(root, 'token'));
  const TOKEN = 'tok3n-s3cr3t-value';
  const spyDir = path.join(root, 'spy-bin');
  const spyLog = path.join(root, 'spy.log');
  // A `git` first on PATH that records what each git invocation could reveal, then runs the real git.
  gitFirstOnPath(spyDir, [
    '{',
    '  printf "argv:%s\\n" "$*"',
    '  printf "username:%s\\n" "$("$GIT_ASKPASS" "Username for \'https://example.test\': ")"',
    '  printf "password:%s\\n" "$("$GIT_ASKPASS" "Password for \'https://x@example.test\': ")"',
    '  printf "askpass-dir-mode:%s\\n" "$(stat -c %a "$(dirname "$GIT_ASKPASS")")"',
    `  printf "files-with-token:%s\\n" "$(grep -rlF -- '${TOKEN}' "$(dirname "$GIT_ASKPASS")")"`,
    '  printf "terminal-prompt:%s allow:%s\\n" "$GIT_TERMINAL_PROMPT" "$GIT_ALLOW_PROTOCOL"',
    `} >> '${spyLog}'`,
  ]);

  it('answers git through the askpass helper, never through argv, the URL or a file', async () => {
    expect(await resolveBranchHead({ url: repo.url, branch: 'main', auth: { kind: 'token', token: TOKEN } })).toBe(
      repo.head(),
    );
    const log = fs.readFileSync(spyLog, 'utf8');
    expect(log).toContain(`argv:ls-remote --heads -- ${repo.url} refs/heads/main`);
    expect(log).toContain('username:x-access-token');
    expect(log).toContain(`password:${TOKEN}`);
    expect(log).toContain('askpass-dir-mode:700');
    expect(log).toContain('files-with-token:\n');
    expect(log).toContain('terminal-prompt:0 allow:https:ssh:git:file');
    expect(log.split('\n').filter((l) => l.startsWith('argv:') && l.includes(TOKEN))).toEqual([]);
  });

  it('uses the given username', async () => {
    fs.rmSync(spyLog, { force: true });
    await resolveBranchHead({
      url: repo.url,
      branch: 'main',
      auth: { kind: 'token', token: TOKEN, username: 'deploy-bot' },
    });
    expect(fs.readFileSync(spyLog, 'utf8')).toContain('username:deploy-bot');
  });

  it('scrubs the token out of git’s reason', async () => {
    const err = await expectGitError(
      resolveBranchHead({ url: `file://${root}/${TOKEN}`, branch: 'main', auth: { kind: 'token', token: TOKEN } }),
      'git_failed',
    );
    expect(err.reason).toContain('***');
    expect(err.reason).not.toContain(TOKEN);
  });
});

describe('git over ssh from a real sshd on loopback', () => {
  const dir = path.join(root, 'ssh');
  fs.mkdirSync(dir, { recursive: true });
  const repo = createRepo(dir);
  const plain = sshKeyPair(dir, 'plain');
  const PASSPHRASE = 'pass phrase 42';
  const locked = sshKeyPair(dir, 'locked', PASSPHRASE);
  const stranger = sshKeyPair(dir, 'stranger');
  let sshd: Awaited<ReturnType<typeof startSshd>>;
  let url: string;

  beforeAll(async () => {
    sshd = await startSshd(dir, [plain.publicKey, locked.publicKey]);
    url = `ssh://root@127.0.0.1:${sshd.port}${repo.dir}`;
  });
  afterAll(async () => {
    await sshd?.stop();
  });

  it('resolves with a key without a passphrase, and again (the host key is accepted per operation)', async () => {
    const auth = { kind: 'ssh_key' as const, privateKey: plain.privateKey };
    expect(await resolveBranchHead({ url, branch: 'main', auth, timeoutMs: SAFETY_TIMEOUT_MS })).toBe(repo.head());
    expect(await resolveBranchHead({ url, branch: 'main', auth, timeoutMs: SAFETY_TIMEOUT_MS })).toBe(repo.head());
  });

  it('resolves an scp-like user@host:path URL… through ssh', async () => {
    // scp-like URLs have no port: only check that it is treated as ssh (refused by the closed port 1), not as a path.
    const err = await expectGitError(
      resolveBranchHead({
        url: `root@127.0.0.1:${repo.dir}`,
        branch: 'main',
        auth: { kind: 'ssh_key', privateKey: plain.privateKey },
        timeoutMs: SAFETY_TIMEOUT_MS,
      }),
      'git_failed',
    );
    expect(err.reason).toMatch(/ssh|connect|Connection|port 22/i);
  });

  it('resolves with a passphrase-protected key', async () => {
    const auth = { kind: 'ssh_key' as const, privateKey: locked.privateKey, passphrase: PASSPHRASE };
    expect(await resolveBranchHead({ url, branch: 'main', auth, timeoutMs: SAFETY_TIMEOUT_MS })).toBe(repo.head());
  });

  it('refuses a wrong passphrase, without echoing it', async () => {
    const err = await expectGitError(
      resolveBranchHead({
        url,
        branch: 'main',
        auth: { kind: 'ssh_key', privateKey: locked.privateKey, passphrase: 'not it at all' },
        timeoutMs: SAFETY_TIMEOUT_MS,
      }),
      'bad_credential',
    );
    expect(err.reason).not.toContain('not it at all');
  });

  it('refuses a key that needs a passphrase when none is given, and text that is no key', async () => {
    await expectGitError(
      resolveBranchHead({
        url,
        branch: 'main',
        auth: { kind: 'ssh_key', privateKey: locked.privateKey },
        timeoutMs: SAFETY_TIMEOUT_MS,
      }),
      'bad_credential',
    );
    await expectGitError(
      resolveBranchHead({
        url,
        branch: 'main',
        auth: { kind: 'ssh_key', privateKey: 'hello' },
        timeoutMs: SAFETY_TIMEOUT_MS,
      }),
      'bad_credential',
    );
  });

  it("passes on ssh's refusal of a key the server does not know, and of no key at all", async () => {
    await expectGitError(
      resolveBranchHead({
        url,
        branch: 'main',
        auth: { kind: 'ssh_key', privateKey: stranger.privateKey },
        timeoutMs: SAFETY_TIMEOUT_MS,
      }),
      'git_failed',
      /Permission denied/,
    );
    await expectGitError(
      resolveBranchHead({ url, branch: 'main', timeoutMs: SAFETY_TIMEOUT_MS }),
      'git_failed',
      /Permission denied/,
    );
  });

  it('checks out a commit only a tag reaches over ssh (protocol v0: the fallback fetches tags too)', async () => {
    const onlyTagged = repo.commit('side');
    repo.git('tag', '-a', '-m', 'release', 'ssh-release');
    repo.git('checkout', '-q', 'main');
    repo.git('branch', '-q', '-D', 'side');
    const out = path.join(root, 'ssh-checkout-tag');
    await checkoutCommit({
      url,
      commit: onlyTagged,
      dir: out,
      auth: { kind: 'ssh_key', privateKey: plain.privateKey },
      timeoutMs: SAFETY_TIMEOUT_MS,
    });
    expect(execFileSync('git', ['rev-parse', 'HEAD'], { cwd: out, encoding: 'utf8' }).trim()).toBe(onlyTagged);
  });

  it('answers that a commit is on no branch or tag over ssh (protocol v0)', async () => {
    await expectGitError(
      checkoutCommit({
        url,
        commit: 'f'.repeat(40),
        dir: path.join(root, 'ssh-checkout-missing'),
        auth: { kind: 'ssh_key', privateKey: plain.privateKey },
        timeoutMs: SAFETY_TIMEOUT_MS,
      }),
      'git_failed',
      /is not on any branch or tag/,
    );
  });

  it('checks out an older commit over ssh (this sshd speaks protocol v0: the every-branch fallback)', async () => {
    const older = repo.head();
    repo.commit();
    const out = path.join(root, 'ssh-checkout');
    await checkoutCommit({
      url,
      commit: older,
      dir: out,
      auth: { kind: 'ssh_key', privateKey: plain.privateKey },
      timeoutMs: SAFETY_TIMEOUT_MS,
    });
    expect(execFileSync('git', ['rev-parse', 'HEAD'], { cwd: out, encoding: 'utf8' }).trim()).toBe(older);
  });
});

describe('timeouts', () => {
  it('kills git and ssh when a server never answers, and cleans up the agent', async () => {
    // A TCP server that accepts and then says nothing: ssh waits for a banner forever.
    const sockets: net.Socket[] = [];
    const silent = net.createServer((s) => sockets.push(s));
    const port = await freePort();
    await new Promise<void>((resolve) => silent.listen(port, '127.0.0.1', resolve));
    try {
      const { privateKey } = sshKeyPair(root, 'timeout-key');
      await expectGitError(
        resolveBranchHead({
          url: `ssh://git@127.0.0.1:${port}/repo.git`,
          branch: 'main',
          auth: { kind: 'ssh_key', privateKey },
          timeoutMs: 1500,
        }),
        'timeout',
      );
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
