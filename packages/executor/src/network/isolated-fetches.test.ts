// Isolated fetches: git and inventory scripts in the bubblewrap sandbox cannot read the data directory (a stand-in
// `git` first on PATH plays a compromised git or hook: it tries to read a canary there before doing its job), and
// BATON_FETCH_DENY_PRIVATE refuses loopback, private and local destinations for git, inventory URLs and Galaxy
// servers, while link-local metadata addresses are refused always.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fs from 'node:fs';
import path from 'node:path';
import type { RunBundle, RunEvent } from '@baton/contracts';
import { checkoutCommit, resolveBranchHead } from '../git/git.js';
import { runInventorySource } from '../inventory/ansible-inventory.js';
import { fetchInventoryUrl } from '../inventory/inventory-url.js';
import { runPlaybook } from '../playbook/run-playbook.js';
import { probeBwrap, type Sandbox } from '../sandbox/sandbox.js';
import { createRepo, expectGitError } from '../testing/index.js';
import { checkedFetchAddress, gitRemoteOf } from './fetch-destination.js';

// Outside the system temp directory (which the git sandbox hides anyway): here only `hidden` keeps it out.
const dataDir = fs.mkdtempSync('/var/tmp/baton-isolation-data-');
const work = fs.mkdtempSync('/var/tmp/baton-isolation-work-');
const CANARY = `data-dir-canary-${process.pid}`;
const fakeBin = path.join(work, 'bin');
const savedPath = process.env.PATH;

beforeAll(async () => {
  expect(await probeBwrap()).toEqual({ available: true });
  fs.writeFileSync(path.join(dataDir, 'baton.db'), CANARY);
  fs.mkdirSync(fakeBin);
  // Reads the data directory if it can (and fails loudly with what it read), else behaves as git.
  fs.writeFileSync(
    path.join(fakeBin, 'git'),
    `#!/bin/sh\nif leaked=$(cat ${dataDir}/baton.db 2>/dev/null); then echo "LEAKED $leaked" >&2; exit 1; fi\nexec /usr/bin/git "$@"\n`,
    { mode: 0o755 },
  );
});
afterAll(() => {
  process.env.PATH = savedPath;
  for (const d of [dataDir, work]) fs.rmSync(d, { recursive: true, force: true });
});

const withFakeGit = async <T>(fn: () => Promise<T>): Promise<T> => {
  process.env.PATH = `${fakeBin}:${savedPath}`;
  try {
    return await fn();
  } finally {
    process.env.PATH = savedPath;
  }
};

describe('git in the sandbox', () => {
  const repo = createRepo(work, 'repo');
  const sandbox: Sandbox = { mode: 'bwrap', hidden: [dataDir] };

  it('without the sandbox, a compromised git reads the data directory (the control)', async () => {
    await withFakeGit(() =>
      expectGitError(
        resolveBranchHead({ url: repo.url, branch: 'main' }),
        'git_failed',
        new RegExp(`LEAKED ${CANARY}`),
      ),
    );
  });

  it('in it, the same git sees no data directory, and resolves and checks out as usual', async () => {
    await withFakeGit(async () => {
      expect(await resolveBranchHead({ url: repo.url, branch: 'main', sandbox })).toBe(repo.head());
      const target = path.join(work, 'checkout');
      await checkoutCommit({ url: repo.url, commit: repo.head(), dir: target, sandbox });
      expect(fs.readFileSync(path.join(target, 'site.yml'), 'utf8')).toMatch(/revision 1/);
    });
  });

  it('a file:// URL into a hidden directory finds nothing', async () => {
    const hiddenRepo = createRepo(dataDir, 'inside');
    await expectGitError(
      resolveBranchHead({ url: hiddenRepo.url, branch: 'main', sandbox }),
      'git_failed',
      /does not appear to be a git repository|not found/,
    );
    expect(await resolveBranchHead({ url: hiddenRepo.url, branch: 'main' })).toBe(hiddenRepo.head());
  });
});

describe('an inventory script in the sandbox', () => {
  const script = path.join(work, 'inventory.sh');
  beforeAll(() => {
    fs.writeFileSync(
      script,
      `#!/bin/sh\nleaked=$(cat ${dataDir}/baton.db 2>/dev/null || echo none)\nprintf '{"all": {"hosts": ["h1"], "vars": {"leaked": "%s"}}}\\n' "$leaked"\n`,
      { mode: 0o755 },
    );
  });
  const leakedBy = async (sandbox: Sandbox) => {
    const result = await runInventorySource({
      source: script,
      enablePlugins: ['script'],
      timeoutMs: 30_000,
      maxOutputBytes: 1024 * 1024,
      sandbox,
    });
    const hostvars = (result.list as { _meta?: { hostvars?: Record<string, { leaked?: string }> } })._meta?.hostvars;
    return hostvars?.h1?.leaked;
  };

  it('reads the data directory without it, and not with it', async () => {
    expect(await leakedBy({ mode: 'off', hidden: [dataDir] })).toBe(CANARY);
    expect(await leakedBy({ mode: 'bwrap', hidden: [dataDir] })).toBe('none');
  });
});

describe('BATON_FETCH_DENY_PRIVATE', () => {
  const deny = { denyPrivate: true };
  const allow = { denyPrivate: false };

  it('reads git remotes of every form', () => {
    expect(gitRemoteOf('https://git.example.com/a.git')).toEqual({
      kind: 'network',
      scheme: 'https',
      host: 'git.example.com',
      port: 443,
    });
    expect(gitRemoteOf('ssh://git@10.0.0.5:2222/a.git')).toMatchObject({ host: '10.0.0.5', port: 2222 });
    expect(gitRemoteOf('git@github.com:ops/a.git')).toMatchObject({ scheme: 'ssh', host: 'github.com', port: 22 });
    expect(gitRemoteOf('file:///srv/a.git')).toEqual({ kind: 'file' });
  });

  it('refuses loopback, private and carrier-grade NAT addresses, also behind a public name; metadata always', async () => {
    for (const host of ['127.0.0.1', '10.1.2.3', '192.168.1.1', '172.20.0.1', '100.64.0.1', '::1', '[fd00::1]'])
      expect(await checkedFetchAddress(host, deny)).toMatchObject({
        ok: false,
        reason: expect.stringMatching(/refused/),
      });
    const rebinding = async () => [{ address: '10.9.9.9', family: 4 }];
    expect(await checkedFetchAddress('innocent.example.com', { ...deny, resolve: rebinding })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(
        /innocent\.example\.com resolves to a refused address: 10\.9\.9\.9 is a loopback or private address/,
      ),
    });
    expect(await checkedFetchAddress('127.0.0.1', allow)).toMatchObject({ ok: true });
    expect(await checkedFetchAddress('169.254.169.254', allow)).toMatchObject({ ok: false });
    const publicName = async () => [{ address: '93.184.216.34', family: 4 }];
    expect(await checkedFetchAddress('example.com', { ...deny, resolve: publicName })).toEqual({
      ok: true,
      address: { address: '93.184.216.34', family: 4 },
    });
  });

  it('refuses a git remote on a private address or a local file:// repository before git runs', async () => {
    const repo = createRepo(work, 'deny');
    await expectGitError(
      resolveBranchHead({ url: repo.url, branch: 'main', fetchPolicy: deny }),
      'refused_url',
      /file:\/\//,
    );
    await expectGitError(
      resolveBranchHead({ url: 'https://127.0.0.1:1/a.git', branch: 'main', fetchPolicy: deny }),
      'refused_url',
      /127\.0\.0\.1 is a loopback or private address/,
    );
    await expectGitError(
      resolveBranchHead({ url: 'ssh://git@169.254.169.254/a.git', branch: 'main', fetchPolicy: allow }),
      'refused_url',
      /169\.254\.169\.254/,
    );
    // A name that does not resolve is a git failure (a server away), not a refused URL.
    await expectGitError(
      resolveBranchHead({
        url: 'https://git.invalid/a.git',
        branch: 'main',
        fetchPolicy: {
          denyPrivate: true,
          resolve: () => Promise.reject(Object.assign(new Error('nx'), { code: 'ENOTFOUND' })),
        },
      }),
      'git_failed',
      /cannot resolve git\.invalid: ENOTFOUND/,
    );
    // Allowed, the same file:// repository resolves.
    expect(await resolveBranchHead({ url: repo.url, branch: 'main', fetchPolicy: allow })).toBe(repo.head());
  });

  it('refuses an inventory URL on a private address', async () => {
    await expect(
      fetchInventoryUrl({ url: 'https://127.0.0.1:1/inv.json', timeoutMs: 2_000, maxBytes: 1024, denyPrivate: true }),
    ).rejects.toThrow(/BATON_FETCH_DENY_PRIVATE/);
  });

  it('fails a run whose Galaxy server is refused before ansible-galaxy runs, and a run from a local repository', async () => {
    const repo = createRepo(work, 'galaxy-project');
    fs.mkdirSync(path.join(repo.dir, 'collections'));
    fs.writeFileSync(path.join(repo.dir, 'collections/requirements.yml'), 'collections:\n  - name: ns.coll\n');
    repo.git('add', '-A');
    repo.git('commit', '-q', '-m', 'requirements');
    const run = async (serverUrl: string, denyPrivate: boolean) => {
      const bundle: RunBundle = {
        run_id: 'run_galaxy_deny',
        playbook: {
          source: 'project',
          path: 'site.yml',
          git: { url: repo.url, commit: repo.head() },
          galaxy: { server_url: serverUrl, token: 'galaxy-token-value' },
        },
        inventory: { content: 'localhost ansible_connection=local\n', format: 'ini' },
        check: false,
        credentials: [],
      };
      const events: RunEvent[] = [];
      const outcome = await runPlaybook(bundle, {
        workRoot: work,
        fetchPolicy: { denyPrivate },
        onEvent: (e) => events.push(e),
      });
      const log = events
        .filter((e) => e.kind === 'log')
        .map((e) => String(e.data.text))
        .join('');
      return { outcome, log };
    };
    // Metadata addresses are refused whatever the setting; nothing was installed, galaxy never started.
    const metadata = await run('http://169.254.169.254/api/', false);
    expect(metadata.outcome).toMatchObject({ conclusion: 'failed', reason: 'requirements' });
    expect(metadata.log).toMatch(/baton: the Galaxy server is refused: .*169\.254\.169\.254/);
    expect(metadata.log).not.toMatch(/installing requirements/);
    // With the setting, the local (file://) project itself is refused first.
    const local = await run('https://galaxy.example.com/api/', true);
    expect(local.outcome).toMatchObject({ conclusion: 'error', reason: 'checkout_failed' });
    expect(local.log).toMatch(/file:\/\/ repositories are local/);
  }, 60_000);
});
