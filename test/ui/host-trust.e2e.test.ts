// Host trust in the web UI against a real `baton serve`, real ansible-playbook and a real sshd in a network namespace:
// the first run records a host's SSH key (listed with a link to that run), a changed key fails the host on the run
// page with a link to the inventory's host keys, where the new key is pinned through the form and the next run
// succeeds; a strict inventory made through the form, the server's line errors beside the textarea, forgetting
// keys, a viewer who sees the keys but no buttons, a project's git server over SSH, Galaxy credentials and the
// project form's Galaxy server, and the Galaxy requirements a sync finds.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KnownHostList, Run } from '@baton/contracts';
import type { Page } from 'playwright-core';
import { tempDir, waitFor } from '../support/baton-process.js';
import { type SshHosts, sshKeygenFingerprint, startSshHosts } from '../support/ssh-hosts.js';
import { call, createUser, setupUi, signIn, tokenFor, visited, withPage } from './support/browser.js';

const { ui, browser } = setupUi();

const PING = '- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.ping:\n';

let ssh: SshHosts;
let operator: { id: string; password: string };
let viewer: { id: string; password: string };
let opToken: string;
let sshKeyId: string;
/** the inventory of the first test, kept for the viewer's */
let acceptNewInventory: string;
let repoDir: string;

interface Named {
  id: string;
  name: string;
}

beforeAll(async () => {
  ssh = await startSshHosts({ count: 1 });
  operator = await createUser(ui(), 'opal', 'operator');
  viewer = await createUser(ui(), 'vera', 'viewer');
  opToken = await tokenFor(ui(), 'opal', operator.password);
  sshKeyId = (
    await api<Named>('POST', '/v1/credentials', {
      name: 'fleet root key',
      type: 'ssh_key',
      inputs: { private_key: ssh.clientKey.privateKey },
    })
  ).id;
  // A repository the host serves over SSH (its namespace shares this machine's filesystem), for the project tests.
  repoDir = fs.mkdtempSync('/var/tmp/baton-ui-trust-repo-');
  git(repoDir, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(repoDir, 'site.yml'), PING);
  git(repoDir, 'add', '.');
  git(repoDir, 'commit', '-qm', 'init');
}, 120_000);

afterAll(async () => {
  await ssh?.stop();
  if (repoDir) fs.rmSync(repoDir, { recursive: true, force: true });
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync(
    'git',
    ['-c', 'user.name=UI test', '-c', 'user.email=ui@test.invalid', '-c', 'init.defaultBranch=main', ...args],
    { cwd, encoding: 'utf8' },
  ).trim();
}

/** A call as the operator that must succeed. */
async function api<T>(method: string, url: string, body?: unknown, token = opToken): Promise<T> {
  const r = await call<T>(ui(), token, method, url, body);
  if (r.status >= 300) throw new Error(`${method} ${url}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

async function runPing(inventoryId: string): Promise<Run> {
  const submitted = await api<Run>('POST', '/v1/runs', {
    playbook: PING,
    inventory_id: inventoryId,
    credential_ids: [sshKeyId],
  });
  return waitFor(
    `run ${submitted.id} to finish`,
    async () => {
      const r = await api<Run>('GET', `/v1/runs/${submitted.id}`);
      return r.status === 'finished' ? r : undefined;
    },
    120_000,
  );
}

const keysOf = (inventoryId: string) => api<KnownHostList>('GET', `/v1/inventories/${inventoryId}/known-hosts`);

const hostKeys = (page: Page) => page.locator('#host-keys');
const keyRow = (page: Page, host: string) => page.getByTestId('host-keys').locator(`tr[data-host="${host}"]`);
const fieldErrors = (page: Page, field: string) => page.locator(`[data-field="${field}"] .field-errors`);

async function confirm(page: Page, name: string): Promise<void> {
  const dialog = page.getByRole('dialog');
  await dialog.waitFor();
  await dialog.getByRole('button', { name, exact: true }).click();
}

describe('host keys of an inventory', () => {
  it('records the key on the first run, shows a changed key on the run page, and runs again once it is pinned', async () => {
    const host = ssh.hosts[0]!;
    acceptNewInventory = (
      await api<Named>('POST', '/v1/inventories', { name: 'fleet', content: `[fleet]\n${ssh.inventory()}` })
    ).id;
    const firstLine = ssh.knownHostsLine(host.name);
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'opal', operator.password);
      await page.goto(`${ui().base}/ui/inventories/${acceptNewInventory}`);
      await page.getByRole('heading', { name: 'Host keys' }).waitFor();
      await page.locator('[data-testid="host-key-policy"][data-policy="accept_new"]').waitFor();
      await hostKeys(page)
        .getByRole('status')
        .filter({ hasText: /No host keys stored.*first run that reaches a host records its key/ })
        .waitFor();
      await visited(page, 'host-trust-inventory-empty');

      const first = await runPing(acceptNewInventory);
      expect(first.conclusion).toBe('succeeded');
      await page.reload();
      const recorded = keyRow(page, host.address);
      await recorded.waitFor();
      expect(await recorded.getAttribute('data-source')).toBe('recorded');
      await expect(recorded.getByTestId('fingerprint').innerText()).resolves.toBe(sshKeygenFingerprint(firstLine));
      await expect(recorded.getByTestId('key-source').innerText()).resolves.toBe(`Recorded by run ${first.id}`);
      await expect(recorded.getByRole('link', { name: first.id }).getAttribute('href')).resolves.toBe(
        `/ui/runs/${first.id}`,
      );
      // The inventory's name for the address stands beside it.
      await expect(recorded.locator('th').innerText()).resolves.toContain(host.name);
      await visited(page, 'host-trust-inventory-recorded');

      await ssh.replaceHostKey(host.name);
      const refused = await runPing(acceptNewInventory);
      expect(refused.conclusion).toBe('failed');
      expect(refused.host_stats?.[host.name]).toMatchObject({ unreachable: 1, reason: 'host key changed' });
      await page.goto(`${ui().base}/ui/runs/${refused.id}`);
      const reason = page.locator(`tr[data-host="${host.name}"] [data-reason="host key changed"]`);
      await reason.waitFor();
      await expect(reason.innerText()).resolves.toMatch(/host key changed/);
      await page
        .getByTestId('host-key-alert')
        .filter({ hasText: `${host.name} was not reached: host key changed` })
        .waitFor();
      await visited(page, 'host-trust-run-host-key-changed');

      await reason.getByRole('link', { name: `Host keys for ${host.name}` }).click();
      await page.getByRole('heading', { name: 'Host keys' }).waitFor();
      const url = new URL(page.url());
      expect(url.pathname).toBe(`/ui/inventories/${acceptNewInventory}`);
      expect(url.hash).toBe('#host-keys');
      // The pin form starts on the address ssh uses for that host; the old key is still the one trusted.
      await expect(page.getByLabel('Host', { exact: true }).inputValue()).resolves.toBe(host.address);
      await expect(keyRow(page, host.address).getByTestId('fingerprint').innerText()).resolves.toBe(
        sshKeygenFingerprint(firstLine),
      );
      await waitFor('the host keys to scroll into view', async () =>
        (await hostKeys(page).evaluate((el) => el.getBoundingClientRect().top)) < 200 ? true : undefined,
      );

      // A key of another host is refused by the server, its line error beside the textarea.
      const newLine = ssh.knownHostsLine(host.name);
      expect(newLine).not.toBe(firstLine);
      await page.getByLabel('Keys', { exact: true }).fill(`10.9.9.9 ${newLine.split(' ').slice(1).join(' ')}`);
      await page.getByRole('button', { name: 'Pin keys' }).click();
      await fieldErrors(page, 'keys')
        .filter({ hasText: `line 1: the line names 10.9.9.9, not ${host.address}` })
        .waitFor();
      await visited(page, 'host-trust-pin-error');

      await page.getByLabel('Keys', { exact: true }).fill(`# ssh-keyscan ${host.address}\n${newLine}\n`);
      await page.getByRole('button', { name: 'Pin keys' }).click();
      await hostKeys(page)
        .getByTestId('host-keys-notice')
        .filter({ hasText: `Pinned 1 key of ${host.address}: ${sshKeygenFingerprint(newLine)}` })
        .waitFor();
      const pinned = keyRow(page, host.address);
      await page.locator(`tr[data-host="${host.address}"][data-source="pinned"]`).waitFor();
      await expect(pinned.getByTestId('fingerprint').innerText()).resolves.toBe(sshKeygenFingerprint(newLine));
      await pinned.getByTestId('key-source').filter({ hasText: 'Pinned by opal' }).waitFor();
      await expect(page.getByLabel('Keys', { exact: true }).inputValue()).resolves.toBe('');
      await visited(page, 'host-trust-pinned');

      const stored = await keysOf(acceptNewInventory);
      expect(stored.items).toEqual([
        expect.objectContaining({ host: host.address, key: newLine.split(' ')[2], source: 'pinned' }),
      ]);
      const accepted = await runPing(acceptNewInventory);
      expect(accepted.conclusion).toBe('succeeded');
      await page.goto(`${ui().base}/ui/runs/${accepted.id}`);
      await page.locator(`tr[data-host="${host.name}"] [data-outcome="ok"]`).waitFor();
      expect(await page.getByTestId('host-key-alert').count()).toBe(0);
      expect(await page.locator('[data-reason]').count()).toBe(0);
    });
  }, 300_000);

  it('makes a strict inventory through the form; line errors show at the textarea; replace all, then forget', async () => {
    const host = ssh.hosts[0]!;
    const line = ssh.knownHostsLine(host.name);
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'opal', operator.password);
      await page.goto(`${ui().base}/ui/inventories/new`);
      await page.getByRole('heading', { name: 'New inventory' }).waitFor();
      const policy = page.getByLabel('Host key checking');
      await expect(policy.inputValue()).resolves.toBe('accept_new');
      await expect(policy.locator('option:checked').innerText()).resolves.toBe('Accept new keys (default)');
      await page.getByLabel('Name', { exact: true }).fill('strict fleet');
      await page.getByLabel('Content').fill(`[fleet]\n${ssh.inventory()}`);
      await policy.selectOption({ label: 'Strict: stored keys only' });
      await page
        .locator('[data-field="host_key_checking"] .policy-chosen')
        .filter({ hasText: 'Only hosts with a stored key are reached' })
        .waitFor();
      await visited(page, 'host-trust-inventory-new-strict');
      await page.getByRole('button', { name: 'Create inventory' }).click();
      await page.getByRole('heading', { name: 'strict fleet', level: 1 }).waitFor();
      const id = new URL(page.url()).pathname.split('/').pop()!;
      expect((await api<{ host_key_checking: string }>('GET', `/v1/inventories/${id}`)).host_key_checking).toBe(
        'strict',
      );
      await page.getByTestId('policy-link').filter({ hasText: 'Strict: stored keys only' }).waitFor();
      await page.locator('[data-testid="host-key-policy"][data-policy="strict"]').waitFor();
      await hostKeys(page).getByRole('status').filter({ hasText: 'whose keys are pinned here' }).waitFor();
      await visited(page, 'host-trust-inventory-strict');

      // Nothing stored: strict refuses the host, and the run page says why.
      const refused = await runPing(id);
      expect(refused.conclusion).toBe('failed');
      await page.goto(`${ui().base}/ui/runs/${refused.id}`);
      await page.locator(`tr[data-host="${host.name}"] [data-reason="host key unknown"]`).waitFor();
      await page.getByTestId('host-key-alert').filter({ hasText: 'no key is stored' }).waitFor();
      await visited(page, 'host-trust-run-host-key-unknown');

      await page.goto(`${ui().base}/ui/inventories/${id}`);
      await page.getByRole('heading', { name: 'Replace or forget all keys' }).waitFor();
      const replaceText = page.getByLabel('known_hosts lines');
      await replaceText.fill(`# from ssh-keyscan\n${line}\n${host.address} ssh-ed25519 not-a-key!\n`);
      await page.getByRole('button', { name: 'Replace all', exact: true }).click();
      await visited(page, 'host-trust-replace-confirm');
      await confirm(page, 'Replace all');
      await fieldErrors(page, 'known_hosts').filter({ hasText: 'line 3: the key is not base64' }).waitFor();
      await visited(page, 'host-trust-replace-line-error');
      expect((await keysOf(id)).items).toEqual([]);

      await replaceText.fill(`# from ssh-keyscan\n${line}\n`);
      await page.getByRole('button', { name: 'Replace all', exact: true }).click();
      await confirm(page, 'Replace all');
      await keyRow(page, host.address).waitFor();
      expect(await keyRow(page, host.address).getAttribute('data-source')).toBe('pinned');
      await hostKeys(page).getByTestId('host-keys-notice').filter({ hasText: '1 key of 1 host pinned' }).waitFor();
      expect(await fieldErrors(page, 'known_hosts').count()).toBe(0);
      expect((await runPing(id)).conclusion).toBe('succeeded');

      // The edit form keeps the policy.
      await page.getByRole('link', { name: 'Edit' }).click();
      await page.getByRole('heading', { name: 'Edit strict fleet' }).waitFor();
      await expect(page.getByLabel('Host key checking').inputValue()).resolves.toBe('strict');
      await visited(page, 'host-trust-inventory-edit');
      await page.getByRole('button', { name: 'Cancel' }).click();

      await page.getByRole('button', { name: `Forget ${host.address}` }).click();
      await visited(page, 'host-trust-forget-confirm');
      await confirm(page, 'Forget');
      await hostKeys(page).getByRole('status').filter({ hasText: 'No host keys stored' }).waitFor();
      expect((await keysOf(id)).items).toEqual([]);
      // Forget all only shows when there is something to forget.
      expect(await page.getByRole('button', { name: 'Forget all' }).count()).toBe(0);
    });
  }, 300_000);

  it('shows a viewer the keys without any button to change them', async () => {
    await api('POST', '/v1/grants', { subject: viewer.id, object: acceptNewInventory, level: 'use' });
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'vera', viewer.password);
      await page.goto(`${ui().base}/ui/inventories/${acceptNewInventory}#host-keys`);
      await keyRow(page, ssh.hosts[0]!.address).waitFor();
      await page.getByRole('heading', { name: 'Who can use this' }).waitFor();
      const section = hostKeys(page);
      expect(await section.getByRole('button').allInnerTexts()).toEqual([]);
      expect(await section.locator('textarea, input').count()).toBe(0);
      expect(await section.getByRole('columnheader', { name: 'Actions' }).count()).toBe(0);
      await visited(page, 'host-trust-viewer');
    });
  }, 120_000);
});

describe('a project’s git server over SSH', () => {
  it('lists the key recorded when the project was made, the pin form set to the server', async () => {
    const host = ssh.hosts[0]!;
    const project = await api<Named>('POST', '/v1/projects', {
      name: 'ssh playbooks',
      git_url: `ssh://root@${host.address}${repoDir}`,
      credential_id: sshKeyId,
    });
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'opal', operator.password);
      await page.goto(`${ui().base}/ui/projects/${project.id}`);
      const row = keyRow(page, host.address);
      await row.waitFor();
      expect(await row.getAttribute('data-source')).toBe('recorded');
      await expect(row.getByTestId('fingerprint').innerText()).resolves.toBe(
        sshKeygenFingerprint(ssh.knownHostsLine(host.name)),
      );
      await expect(page.getByLabel('Host', { exact: true }).inputValue()).resolves.toBe(host.address);
      await page.locator('[data-testid="host-key-policy"][data-policy="accept_new"]').waitFor();
      await visited(page, 'host-trust-project-ssh');
    });
  }, 120_000);
});

describe('Galaxy', () => {
  let galaxyId: string;
  const token = `galaxy-token-${Date.now()}-never-shown`;

  it('creates a galaxy credential through the form; its token is never shown back', async () => {
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'opal', operator.password);
      await page.goto(`${ui().base}/ui/credentials/new`);
      await page.getByRole('heading', { name: 'New credential' }).waitFor();
      await page.getByLabel('Name', { exact: true }).fill('private hub');
      await page.getByLabel('Type').selectOption({ label: 'Galaxy server' });
      await page.getByLabel('Server URL').fill('ftp://hub.example.com/api/');
      await page.getByLabel('Token').fill(token);
      await visited(page, 'host-trust-galaxy-new');
      await page.getByRole('button', { name: 'Create credential' }).click();
      await fieldErrors(page, 'inputs.url').filter({ hasText: 'http(s)' }).waitFor();
      await visited(page, 'host-trust-galaxy-url-error');

      await page.getByLabel('Server URL').fill('https://hub.example.com/api/galaxy/');
      await page.getByRole('button', { name: 'Create credential' }).click();
      await page.getByRole('heading', { name: 'private hub', level: 1 }).waitFor();
      galaxyId = new URL(page.url()).pathname.split('/').pop()!;
      await page.getByText('https://hub.example.com/api/galaxy/', { exact: true }).waitFor();
      await page.getByTestId('secret-fields').filter({ hasText: 'Token: set' }).waitFor();
      expect(await page.content()).not.toContain(token);
      await visited(page, 'host-trust-galaxy-credential');

      await page.getByRole('link', { name: 'Edit' }).click();
      await page.getByRole('heading', { name: 'Edit private hub' }).waitFor();
      await expect(page.getByLabel('Token').inputValue()).resolves.toBe('');
      await page.getByText('leave blank to keep it').first().waitFor();
      expect(await page.content()).not.toContain(token);
      await visited(page, 'host-trust-galaxy-edit');
    });
    const saved = await api<{ type: string; inputs: Record<string, string>; secret_fields: string[] }>(
      'GET',
      `/v1/credentials/${galaxyId}`,
    );
    expect(saved).toMatchObject({
      type: 'galaxy',
      inputs: { url: 'https://hub.example.com/api/galaxy/' },
      secret_fields: ['token'],
    });
  }, 120_000);

  it('offers galaxy credentials only in the project form’s Galaxy server, and shows it on the project', async () => {
    const repo = makeFileRepo();
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'opal', operator.password);
      await page.goto(`${ui().base}/ui/projects/new`);
      await page.getByRole('heading', { name: 'New project' }).waitFor();
      const galaxy = page.getByLabel('Galaxy server');
      await galaxy.locator('option', { hasText: 'private hub' }).waitFor({ state: 'attached' });
      expect(await galaxy.locator('option').allInnerTexts()).toEqual([
        'None (ansible-galaxy’s default server)',
        'private hub (galaxy)',
      ]);
      // …and never in the repository's credential.
      expect(await page.getByLabel('Credential', { exact: true }).locator('option').allInnerTexts()).toEqual([
        'None (public repository)',
        'fleet root key (ssh_key)',
      ]);
      await visited(page, 'host-trust-project-new');
      await page.getByLabel('Name', { exact: true }).fill('galaxy playbooks');
      await page.getByLabel('Git URL').fill(repo.url);
      await galaxy.selectOption({ label: 'private hub (galaxy)' });
      await page.getByLabel('Host key checking').selectOption('strict');
      await page.getByRole('button', { name: 'Create project' }).click();
      await page.getByRole('heading', { name: 'galaxy playbooks', level: 1 }).waitFor();
      const id = new URL(page.url()).pathname.split('/').pop()!;
      const details = page.locator('dl.details');
      await details.getByRole('link', { name: 'private hub' }).waitFor();
      await expect(details.getByRole('link', { name: 'private hub' }).getAttribute('href')).resolves.toBe(
        `/ui/credentials/${galaxyId}`,
      );
      await details.getByText('Strict: stored keys only').waitFor();
      await page.locator('[data-testid="host-key-policy"][data-policy="strict"]').waitFor();
      await visited(page, 'host-trust-project-galaxy');
      expect(await api<Record<string, unknown>>('GET', `/v1/projects/${id}`)).toMatchObject({
        galaxy_credential_id: galaxyId,
        host_key_checking: 'strict',
      });

      // Detaching it: the edit sends null.
      await page.getByRole('link', { name: 'Edit' }).click();
      await page.getByRole('heading', { name: 'Edit galaxy playbooks' }).waitFor();
      await expect(page.getByLabel('Galaxy server').inputValue()).resolves.toBe(galaxyId);
      await page.getByLabel('Galaxy server').selectOption({ label: 'None (ansible-galaxy’s default server)' });
      await page.getByRole('button', { name: 'Save project' }).click();
      await page.getByRole('heading', { name: 'galaxy playbooks', level: 1 }).waitFor();
      await page.locator('dl.details').getByText('ansible-galaxy’s default').waitFor();
      expect(await api<Record<string, unknown>>('GET', `/v1/projects/${id}`)).toMatchObject({
        galaxy_credential_id: null,
        host_key_checking: 'strict',
      });
    });
  }, 120_000);

  // Last: it needs the sync answer's `requirements`.
  it('shows the Galaxy requirements a sync finds at the new commit', async () => {
    const repo = makeFileRepo();
    const project = await api<Named>('POST', '/v1/projects', { name: 'with requirements', git_url: repo.url });
    repo.commit('roles/requirements.yml', '- name: geerlingguy.nginx\n');
    const commit = repo.commit(
      'collections/requirements.yml',
      'collections:\n  - name: community.general\n    version: ">=8.0.0"\n  - name: ansible.posix\n',
    );
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'opal', operator.password);
      await page.goto(`${ui().base}/ui/projects/${project.id}`);
      await page.getByRole('heading', { name: 'with requirements', level: 1 }).waitFor();
      expect(await page.getByTestId('requirements').count()).toBe(0);
      await page.getByRole('button', { name: 'Sync' }).click();
      await page
        .getByTestId('sync-result')
        .filter({ hasText: commit.slice(0, 10) })
        .waitFor();
      const section = page.getByTestId('requirements');
      await section.waitFor();
      const cells = (file: string, column: number) =>
        section.locator(`tr[data-requirements="${file}"] td`).nth(column).locator('li').allInnerTexts();
      const collections = await cells('collections/requirements.yml', 0);
      expect(collections).toHaveLength(2);
      expect(collections[0]).toContain('community.general');
      expect(collections[1]).toContain('ansible.posix');
      const roles = await cells('roles/requirements.yml', 1);
      expect(roles).toHaveLength(1);
      expect(roles[0]).toContain('geerlingguy.nginx');
      expect(await cells('collections/requirements.yml', 1)).toEqual([]);
      expect(await page.getByTestId('requirements-problem').count()).toBe(0);
      await visited(page, 'host-trust-requirements');

      // A file that does not read as YAML: its problem is shown, and runs are said to fail on it.
      const broken = repo.commit('requirements.yml', 'roles: [unclosed\n');
      await page.getByRole('button', { name: 'Sync' }).click();
      await page
        .getByTestId('sync-result')
        .filter({ hasText: broken.slice(0, 10) })
        .waitFor();
      const brokenRow = section.locator('tr[data-requirements="requirements.yml"]');
      await brokenRow.waitFor();
      await page.getByTestId('requirements-problem').waitFor();
      await brokenRow.locator('.problem-text').waitFor();
      await visited(page, 'host-trust-requirements-problem');
    });
  }, 120_000);
});

/** A bare repository reached by file:// and a work tree pushing commits to it (a playbook in the first). */
function makeFileRepo(): { url: string; commit(file: string, content: string): string } {
  const root = tempDir('ui-trust-git-');
  const bare = path.join(root, 'playbooks.git');
  const work = path.join(root, 'work');
  fs.mkdirSync(work);
  git(root, 'init', '--bare', '--quiet', bare);
  git(work, 'init', '--quiet');
  git(work, 'remote', 'add', 'origin', bare);
  const commit = (file: string, content: string) => {
    fs.mkdirSync(path.dirname(path.join(work, file)), { recursive: true });
    fs.writeFileSync(path.join(work, file), content);
    git(work, 'add', file);
    git(work, 'commit', '--quiet', '-m', `change ${file}`);
    git(work, 'push', '--quiet', 'origin', 'HEAD:main');
    return git(work, 'rev-parse', 'HEAD');
  };
  commit('site.yml', PING);
  return { url: `file://${bare}`, commit };
}
