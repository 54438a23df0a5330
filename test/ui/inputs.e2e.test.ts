// Inputs in the web UI: inventories (syntax errors at the content field, groups and hosts), credentials (type
// forms, write-only secrets, blank keeps), projects from a real git repository (file://, sync shows the new
// commit), inventory sources (refresh result and error), confirmed deletes, 409 "in use", and a viewer's view.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { tempDir, waitFor } from '../support/baton-process.js';
import {
  ADMIN_PASSWORD,
  call,
  createUser,
  localInventory,
  openPage,
  setupUi,
  signIn,
  visited,
  withPage,
} from './support/browser.js';

const { ui, browser } = setupUi();
let repo: GitRepo;

interface Named {
  id: string;
  name: string;
}

/** A bare repository reached by file:// and a work tree that pushes commits to it. */
interface GitRepo {
  url: string;
  commit(file: string, content: string, opts?: { executable?: boolean }): string;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync(
    'git',
    ['-c', 'user.name=UI test', '-c', 'user.email=ui@test.invalid', '-c', 'init.defaultBranch=main', ...args],
    { cwd, encoding: 'utf8' },
  ).trim();
}

function makeRepo(): GitRepo {
  const root = tempDir('ui-inputs-git-');
  const bare = path.join(root, 'playbooks.git');
  const work = path.join(root, 'work');
  fs.mkdirSync(work);
  git(root, 'init', '--bare', '--quiet', bare);
  git(work, 'init', '--quiet');
  git(work, 'remote', 'add', 'origin', bare);
  return {
    url: `file://${bare}`,
    commit(file, content, opts = {}) {
      fs.writeFileSync(path.join(work, file), content, { mode: opts.executable ? 0o755 : 0o644 });
      git(work, 'add', file);
      git(work, 'commit', '--quiet', '-m', `change ${file}`);
      git(work, 'push', '--quiet', 'origin', 'HEAD:main');
      return git(work, 'rev-parse', 'HEAD');
    },
  };
}

const INVENTORY_SCRIPT = `#!/usr/bin/env python3
import json, sys
if len(sys.argv) > 1 and sys.argv[1] == '--host':
    print('{}')
else:
    print(json.dumps({'cmdb': {'hosts': ['s1', 's2']}, '_meta': {'hostvars': {}}}))
`;

beforeAll(async () => {
  repo = makeRepo();
  repo.commit('site.yml', '- hosts: all\n  gather_facts: false\n  tasks: []\n');
  repo.commit('inventory.py', INVENTORY_SCRIPT, { executable: true });
}, 90_000);

async function api<T>(method: string, url: string, body?: unknown): Promise<T> {
  const r = await call<T>(ui(), ui().adminToken, method, url, body);
  if (r.status >= 300) throw new Error(`${method} ${url}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Confirms the open confirmation dialog with its button `name`. */
async function confirm(page: Page, name: string): Promise<void> {
  const dialog = page.getByRole('dialog');
  await dialog.waitFor();
  await dialog.getByRole('button', { name, exact: true }).click();
}

const fieldErrors = (page: Page, field: string) => page.locator(`[data-field="${field}"] .field-errors`);

describe('inventories', () => {
  it('keeps a syntax error at the content field and saves nothing, then shows a good one as groups and hosts', async () => {
    const { page, problems, close } = await openPage(browser());
    const posts: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST' && new URL(r.url()).pathname === '/v1/inventories') posts.push(r.url());
    });
    try {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/inventories`);
      await page.getByRole('status').filter({ hasText: 'No inventories yet' }).waitFor();
      await visited(page, 'inputs-inventories-empty');

      await page.getByRole('link', { name: 'New inventory' }).click();
      await page.getByRole('heading', { name: 'New inventory' }).waitFor();
      await page.getByLabel('Name', { exact: true }).fill('web-tier');
      // YAML with an unclosed flow mapping: caught in the browser, never sent.
      await page.getByLabel('Content').fill('all:\n  hosts:\n    web1: {ansible_host: 10.0.0.1\n');
      await page.getByRole('button', { name: 'Create inventory' }).click();
      await fieldErrors(page, 'content')
        .filter({ hasText: /YAML syntax error at line \d+/ })
        .waitFor();
      expect(posts).toEqual([]);
      await visited(page, 'inputs-inventory-yaml-error');

      // INI that ansible-inventory refuses: the API's 400 on `content` shows at the same field.
      await page.getByLabel('Content').fill('[web]\nweb1 ansible_host\n');
      await page.getByRole('button', { name: 'Create inventory' }).click();
      await fieldErrors(page, 'content')
        .filter({ hasText: /key=value/ })
        .waitFor();
      expect(posts).toHaveLength(1);
      expect(new URL(page.url()).pathname).toBe('/ui/inventories/new');
      expect(await api<Named[]>('GET', '/v1/inventories')).toEqual([]);
      await visited(page, 'inputs-inventory-ansible-error');

      await page
        .getByLabel('Content')
        .fill(
          '[web]\nweb1 ansible_host=10.0.0.11 http_port=8080\nweb2 ansible_host=10.0.0.12\n\n[db]\ndb1\n\n' +
            '[prod:children]\nweb\ndb\n\n[web:vars]\ntier=frontend\n',
        );
      await page.getByRole('button', { name: 'Create inventory' }).click();
      await page.getByRole('heading', { name: 'web-tier' }).waitFor();
      expect(new URL(page.url()).pathname).toMatch(/^\/ui\/inventories\/inv_/);

      const group = (name: string) => page.getByTestId('groups').locator(`tr[data-group="${name}"]`);
      await expect(group('web').innerText()).resolves.toMatch(/web1[\s\S]*web2[\s\S]*tier=frontend/);
      const prod = await group('prod').innerText();
      expect(prod).toContain('web');
      expect(prod).toContain('db');
      const host = (name: string) => page.getByTestId('hosts').locator(`tr[data-host="${name}"]`);
      await host('db1').waitFor();
      const web1 = await host('web1').innerText();
      expect(web1).toContain('prod');
      expect(web1).toContain('web');
      expect(web1).toContain('ansible_host=10.0.0.11');
      expect(web1).toContain('http_port=8080');
      await visited(page, 'inputs-inventory-detail');

      await page.getByRole('link', { name: 'Edit' }).click();
      await page.getByRole('heading', { name: 'Edit web-tier' }).waitFor();
      const content = page.getByLabel('Content');
      await content.fill(`${await content.inputValue()}\n[web]\nweb3\n`);
      await visited(page, 'inputs-inventory-edit');
      await page.getByRole('button', { name: 'Save inventory' }).click();
      await host('web3').waitFor();

      await page.getByRole('button', { name: 'Delete' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
      await expect(page.getByRole('dialog').isVisible()).resolves.toBe(false);
      await page.getByRole('button', { name: 'Delete' }).click();
      await visited(page, 'inputs-inventory-delete-confirm');
      await confirm(page, 'Delete');
      await page.getByRole('status').filter({ hasText: 'No inventories yet' }).waitFor();
      expect(await api<Named[]>('GET', '/v1/inventories')).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });
});

describe('credentials', () => {
  it('creates an ssh_key credential whose key never appears in a page, and editing with the key blank keeps it', async () => {
    const dir = tempDir('ui-inputs-key-');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'ui-test', '-f', path.join(dir, 'id')]);
    const privateKey = fs.readFileSync(path.join(dir, 'id'), 'utf8');
    const keyBody = privateKey.split('\n')[1]!;
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/credentials`);
      await page.getByRole('link', { name: 'New credential' }).click();
      await page.getByRole('heading', { name: 'New credential' }).waitFor();
      await page.getByLabel('Name', { exact: true }).fill('deploy-key');
      await page.getByLabel('Type').selectOption({ label: 'SSH key' });
      await page.getByLabel('Private key').fill('not a key at all');
      await page.getByRole('button', { name: 'Create credential' }).click();
      await fieldErrors(page, 'inputs.private_key').waitFor();
      await visited(page, 'inputs-credential-ssh-key-error');

      await page.getByLabel('Private key').fill(privateKey);
      await page.getByLabel('Username').fill('deploy');
      await page.getByRole('button', { name: 'Create credential' }).click();
      await page.getByRole('heading', { name: 'deploy-key' }).waitFor();
      await page.getByTestId('secret-fields').filter({ hasText: 'Private key: set' }).waitFor();
      expect(await page.content()).not.toContain(keyBody);
      await visited(page, 'inputs-credential-ssh-key');

      await page.getByRole('link', { name: 'Edit' }).click();
      await page.getByRole('heading', { name: 'Edit deploy-key' }).waitFor();
      await expect(page.getByLabel('Private key').inputValue()).resolves.toBe('');
      await page.getByText('leave blank to keep it').first().waitFor();
      expect(await page.content()).not.toContain(keyBody);
      await visited(page, 'inputs-credential-ssh-key-edit');
      await page.getByLabel('Username').fill('ops');
      await page.getByRole('button', { name: 'Save credential' }).click();
      await page.getByRole('heading', { name: 'deploy-key' }).waitFor();
      await page.getByText('ops', { exact: true }).waitFor();

      const list = await api<Array<Named & { inputs: Record<string, string>; secret_fields: string[] }>>(
        'GET',
        '/v1/credentials',
      );
      const saved = list.find((c) => c.name === 'deploy-key')!;
      expect(saved.inputs).toEqual({ username: 'ops' });
      expect(saved.secret_fields).toEqual(['private_key']);
      await page.goto(`${ui().base}/ui/credentials`);
      await page.getByRole('link', { name: 'deploy-key' }).waitFor();
      expect(await page.content()).not.toContain(keyBody);
      await visited(page, 'inputs-credentials-list');
    });
  });

  it('creates an env credential from rows; renaming it with the values blank keeps them for runs', async () => {
    const secret = `value-${Date.now()}-kept-secret`;
    const other = 'another-secret-value-42';
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/credentials/new`);
      await page.getByLabel('Name', { exact: true }).fill('app-env');
      await page.getByLabel('Type').selectOption({ label: 'Environment variables' });
      await page.getByLabel('Variable 1 name').fill('PATH');
      await page.getByLabel('Variable 1 value').fill('/tmp');
      await page.getByRole('button', { name: 'Create credential' }).click();
      await fieldErrors(page, 'inputs.variables')
        .filter({ hasText: /reserved/ })
        .waitFor();
      await visited(page, 'inputs-credential-env-error');

      await page.getByLabel('Variable 1 name').fill('UI_TEST_SECRET');
      await page.getByLabel('Variable 1 value').fill(secret);
      await page.getByRole('button', { name: 'Add variable' }).click();
      await page.getByLabel('Variable 2 name').fill('UI_OTHER');
      await page.getByLabel('Variable 2 value').fill(other);
      await page.getByRole('button', { name: 'Create credential' }).click();
      await page.getByRole('heading', { name: 'app-env' }).waitFor();
      await page.getByTestId('secret-fields').filter({ hasText: 'UI_OTHER: set' }).waitFor();
      const html = await page.content();
      expect(html).not.toContain(secret);
      expect(html).not.toContain(other);
      await visited(page, 'inputs-credential-env');

      await page.getByRole('link', { name: 'Edit' }).click();
      await page.getByRole('heading', { name: 'Edit app-env' }).waitFor();
      await expect(page.getByLabel('Variable 1 name').inputValue()).resolves.toBe('UI_OTHER');
      await expect(page.getByLabel('Variable 1 value').inputValue()).resolves.toBe('');
      // Adding a variable replaces the set: the stored values must be typed again, and the form says so.
      await page.getByRole('button', { name: 'Add variable' }).click();
      await page.getByLabel('Variable 3 name').fill('UI_NEW');
      await page.getByLabel('Variable 3 value').fill('new');
      await page.getByRole('button', { name: 'Save credential' }).click();
      await fieldErrors(page, 'inputs.variables')
        .filter({ hasText: /UI_OTHER, UI_TEST_SECRET too/ })
        .waitFor();
      await visited(page, 'inputs-credential-env-edit');
      await page.getByRole('button', { name: 'Remove variable 3 (UI_NEW)' }).click();
      await page.getByLabel('Name', { exact: true }).fill('app-env-renamed');
      await page.getByRole('button', { name: 'Save credential' }).click();
      await page.getByRole('heading', { name: 'app-env-renamed' }).waitFor();
      expect(await page.content()).not.toContain(secret);

      // The kept value reaches a run: the playbook compares its hash, so the secret is never in the playbook.
      const cred = (await api<Named[]>('GET', '/v1/credentials')).find((c) => c.name === 'app-env-renamed')!;
      const inventoryId = await localInventory(ui(), 'env-check', ['alpha']);
      const digest = createHash('sha1').update(secret).digest('hex');
      const submitted = await api<{ id: string }>('POST', '/v1/runs', {
        playbook: `- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.assert:\n        that: (lookup('ansible.builtin.env', 'UI_TEST_SECRET') | hash('sha1')) == '${digest}'\n`,
        inventory_id: inventoryId,
        credential_ids: [cred.id],
      });
      const run = await waitFor(`run ${submitted.id} to finish`, async () => {
        const r = await api<{ status: string; conclusion: string | null }>('GET', `/v1/runs/${submitted.id}`);
        return r.status === 'finished' ? r : undefined;
      });
      expect(run.conclusion).toBe('succeeded');
    });
  });
});

describe('projects and inventory sources', () => {
  it('registers a git repository by file:// URL, shows its commit, and sync shows the new head', async () => {
    const first = repo.commit('README.md', 'playbooks\n');
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/projects`);
      await page.getByRole('status').filter({ hasText: 'No projects yet' }).waitFor();
      await visited(page, 'inputs-projects-empty');
      await page.getByRole('link', { name: 'New project' }).click();
      await page.getByLabel('Name', { exact: true }).fill('playbooks');
      await page.getByLabel('Git URL').fill(`${repo.url}-missing`);
      await page.getByRole('button', { name: 'Create project' }).click();
      await fieldErrors(page, 'git_url').waitFor();
      await visited(page, 'inputs-project-new-error');
      await page.getByLabel('Git URL').fill(repo.url);
      await page.getByRole('button', { name: 'Create project' }).click();
      await page.getByRole('heading', { name: 'playbooks' }).waitFor();
      await page.locator(`[data-commit="${first}"]`).first().waitFor();
      await page.getByRole('status').filter({ hasText: 'No runs from this project yet' }).waitFor();
      const projectId = new URL(page.url()).pathname.split('/').pop()!;
      await expect(page.getByRole('link', { name: 'All runs of this project' }).getAttribute('href')).resolves.toBe(
        `/ui/runs?project=${projectId}`,
      );
      await visited(page, 'inputs-project-detail');

      const second = repo.commit('site.yml', '- hosts: all\n  gather_facts: false\n  tasks: [{ping: }]\n');
      await page.getByRole('button', { name: 'Sync' }).click();
      await page
        .getByTestId('sync-result')
        .filter({ hasText: second.slice(0, 10) })
        .waitFor();
      await page.locator(`dd [data-commit="${second}"]`).waitFor();
      await visited(page, 'inputs-project-synced');

      // A branch git cannot find: the API's 422 shows at the branch field, and nothing changes.
      await page.getByRole('link', { name: 'Edit' }).click();
      await page.getByLabel('Branch').fill('no-such-branch');
      await page.getByRole('button', { name: 'Save project' }).click();
      await fieldErrors(page, 'branch')
        .filter({ hasText: /no-such-branch/ })
        .waitFor();
      await visited(page, 'inputs-project-edit-error');
      await page.getByRole('button', { name: 'Cancel' }).click();
      await page.getByRole('heading', { name: 'playbooks' }).waitFor();

      await page.goto(`${ui().base}/ui/projects`);
      const row = page.getByRole('row').filter({ hasText: 'playbooks' });
      await expect(row.innerText()).resolves.toContain(second.slice(0, 10));
      await expect(row.innerText()).resolves.toContain('Synced');
      await visited(page, 'inputs-projects-list');
      // On a phone the table scrolls inside its wrapper; the page itself never scrolls sideways.
      await page.setViewportSize({ width: 390, height: 800 });
      await row.waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await visited(page, 'inputs-projects-phone');
    });
  });

  it('creates a script source, refresh shows its hosts, a failing one its error; in-use deletes say what uses them', async () => {
    const project = await api<Named>('POST', '/v1/projects', { name: 'inventory-scripts', git_url: repo.url });
    const target = await localInventory(ui(), 'cmdb', ['placeholder']);
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/inventory-sources`);
      await page.getByRole('status').filter({ hasText: 'No inventory sources yet' }).waitFor();
      await visited(page, 'inputs-sources-empty');
      await page.getByRole('link', { name: 'New source' }).click();
      await page.getByLabel('Name', { exact: true }).fill('cmdb-script');
      await page.getByLabel('Kind').selectOption('script');
      await page.getByLabel('Target inventory').selectOption({ label: 'cmdb' });
      await page.getByLabel('Project', { exact: true }).selectOption({ label: 'inventory-scripts' });
      await page.getByRole('button', { name: 'Create source' }).click();
      await fieldErrors(page, 'path')
        .filter({ hasText: /required/ })
        .waitFor();
      await visited(page, 'inputs-source-new-error');
      await page.getByLabel('Path in the project').fill('inventory.py');
      await page.getByRole('button', { name: 'Create source' }).click();
      await page.getByRole('heading', { name: 'cmdb-script' }).waitFor();
      await page.locator('[data-refresh="never refreshed"]').waitFor();

      await page.getByRole('button', { name: 'Refresh' }).click();
      await page.getByTestId('refresh-result').filter({ hasText: '2 hosts' }).waitFor();
      await page.locator('[data-refresh="refreshed"]').waitFor();
      await visited(page, 'inputs-source-refreshed');
      const hosts = await api<Array<{ name: string }>>('GET', `/v1/inventories/${target}/hosts`);
      expect(hosts.map((h) => h.name)).toEqual(['s1', 's2']);

      await page.getByRole('link', { name: 'Edit' }).click();
      await page.getByLabel('Path in the project').fill('missing.py');
      await page.getByRole('button', { name: 'Save source' }).click();
      await page.getByRole('heading', { name: 'cmdb-script' }).waitFor();
      await page.getByRole('button', { name: 'Refresh' }).click();
      await page.getByTestId('refresh-error').filter({ hasText: 'missing.py does not exist' }).waitFor();
      await page.getByTestId('last-error').filter({ hasText: 'missing.py does not exist' }).waitFor();
      await visited(page, 'inputs-source-refresh-failed');
      expect((await api<Array<{ name: string }>>('GET', `/v1/inventories/${target}/hosts`)).length).toBe(2);

      await page.goto(`${ui().base}/ui/inventory-sources`);
      const row = page.getByRole('row').filter({ hasText: 'cmdb-script' });
      await row.locator('[data-refresh="failed"]').waitFor();
      await expect(row.innerText()).resolves.toContain('missing.py does not exist');
      await expect(row.getByRole('link', { name: 'cmdb', exact: true }).count()).resolves.toBe(1);
      await visited(page, 'inputs-sources-list');

      // The project is used by the source: its delete is a 409 naming the source.
      await page.goto(`${ui().base}/ui/projects/${project.id}`);
      await page.getByRole('button', { name: 'Delete' }).click();
      await confirm(page, 'Delete');
      await page
        .getByTestId('in-use')
        .filter({ hasText: /inventory.source.*cmdb-script/ })
        .waitFor();
      await visited(page, 'inputs-project-in-use');

      await page.goto(`${ui().base}/ui/inventory-sources`);
      await page.getByRole('link', { name: 'cmdb-script' }).click();
      await page.getByRole('button', { name: 'Delete' }).click();
      await confirm(page, 'Delete');
      await page.getByRole('status').filter({ hasText: 'No inventory sources yet' }).waitFor();
    });
  });

  it('refuses to delete a credential a project uses, saying which project', async () => {
    const token = await api<Named>('POST', '/v1/credentials', {
      name: 'git-token',
      type: 'token',
      inputs: { token: 'ghp_not_a_real_token_for_tests' },
    });
    const project = await api<Named>('POST', '/v1/projects', {
      name: 'private-playbooks',
      git_url: repo.url,
      credential_id: token.id,
    });
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/credentials/${token.id}`);
      await page.getByRole('heading', { name: 'git-token' }).waitFor();
      await page.getByRole('button', { name: 'Delete' }).click();
      await confirm(page, 'Delete');
      await page.getByTestId('in-use').filter({ hasText: project.id }).waitFor();
      await expect(page.getByTestId('in-use').innerText()).resolves.toContain('private-playbooks');
      await visited(page, 'inputs-credential-in-use');
      expect((await call(ui(), ui().adminToken, 'GET', `/v1/credentials/${token.id}`)).status).toBe(200);
    });
  });
});

describe('a viewer', () => {
  it('sees the inputs granted to them without any button to change them', async () => {
    const viewer = await createUser(ui(), 'input-viewer', 'viewer');
    const project = await api<Named>('POST', '/v1/projects', { name: 'viewer-project', git_url: repo.url });
    const inventory = await localInventory(ui(), 'viewer-inventory', ['v1']);
    const credential = await api<Named>('POST', '/v1/credentials', {
      name: 'viewer-vault',
      type: 'vault_password',
      inputs: { password: 'vault password for the viewer test' },
    });
    const source = await api<Named>('POST', '/v1/inventory-sources', {
      name: 'viewer-source',
      kind: 'script',
      inventory_id: inventory,
      project_id: project.id,
      path: 'inventory.py',
    });
    for (const object of [project.id, inventory, credential.id, source.id])
      await api('POST', '/v1/grants', { subject: viewer.id, object, level: 'use' });

    const { page, problems, close } = await openPage(browser());
    const changeButtons = page
      .getByRole('button', { name: /^(New|Edit|Delete|Sync|Refresh|Grant|Revoke)/ })
      .or(page.getByRole('link', { name: /^(New|Edit)\b/ }));
    try {
      await signIn(page, ui().base, 'input-viewer', viewer.password);
      const pages: Array<[string, string]> = [
        ['/projects', 'viewer-project'],
        [`/projects/${project.id}`, 'viewer-project'],
        ['/inventories', 'viewer-inventory'],
        [`/inventories/${inventory}`, 'viewer-inventory'],
        ['/credentials', 'viewer-vault'],
        [`/credentials/${credential.id}`, 'viewer-vault'],
        ['/inventory-sources', 'viewer-source'],
        [`/inventory-sources/${source.id}`, 'viewer-source'],
      ];
      for (const [url, name] of pages) {
        await page.goto(`${ui().base}/ui${url}`);
        const detail = url.split('/').length > 2;
        if (detail) {
          await page.getByRole('heading', { name, exact: true }).waitFor();
          await page.getByRole('heading', { name: 'Who can use this' }).waitFor();
        } else await page.getByRole('link', { name, exact: true }).waitFor();
        const loading = page.getByRole('status').filter({ hasText: /Loading/ });
        await waitFor(`${url} to load`, async () => ((await loading.count()) === 0 ? true : undefined));
        expect({ url, buttons: await changeButtons.allInnerTexts() }).toEqual({ url, buttons: [] });
        await visited(page, `inputs-viewer${url.replace(/\/(prj|inv|cred|src)_[^/]+/, '-detail')}`);
      }
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });
});
