// A project run whose requirements come from the cache inside the hidden data directory, with and without the
// bubblewrap sandbox: the playbook reads the installed role and collection, and cannot write the cache.
import { afterAll, describe, expect, it } from '@jest/globals';
import fs from 'node:fs';
import path from 'node:path';
import type { RunBundle, RunEvent } from '@baton/contracts';
import type { SandboxMode } from '../sandbox/sandbox.js';
import {
  collectionRequirement,
  createCollectionRepo,
  createRepo,
  createRoleRepo,
  roleRequirement,
  tempDir,
} from '../testing/index.js';
import { runPlaybook } from './run-playbook.js';

const root = tempDir('baton-run-requirements');
// Outside the system temp directory, which the sandbox hides anyway: here only `hidden` keeps it out.
const dataDir = fs.mkdtempSync('/var/tmp/baton-requirements-data-');
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

const role = createRoleRepo(root);
const collection = createCollectionRepo(root);
const repo = createRepo(root, 'project');
const write = (rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(repo.dir, rel)), { recursive: true });
  fs.writeFileSync(path.join(repo.dir, rel), text);
};
write('roles/requirements.yml', roleRequirement(role));
write('collections/requirements.yml', `collections:\n${collectionRequirement(collection).replace(/^/gm, '  ')}`);
write(
  'site.yml',
  [
    '- hosts: all',
    '  gather_facts: false',
    '  roles: [baton_test_role, baton.testcoll.inner]',
    '  tasks:',
    '    - shell: touch "$ANSIBLE_ROLES_PATH/planted" 2>&1 || true',
    '      register: planted',
    '',
  ].join('\n'),
);
repo.git('add', '-A');
repo.git('commit', '-q', '-m', 'requirements');

async function run(mode: SandboxMode) {
  const events: RunEvent[] = [];
  const bundle: RunBundle = {
    run_id: `run_req_${mode}`,
    playbook: {
      source: 'project',
      path: 'site.yml',
      project_id: 'prj_requirements',
      git: { url: repo.url, commit: repo.head() },
    },
    inventory: {
      content: 'localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n',
      format: 'ini',
    },
    check: false,
    credentials: [],
  };
  const outcome = await runPlaybook(bundle, {
    workRoot: root,
    sandbox: { mode, hidden: [dataDir] },
    requirementsCache: path.join(dataDir, 'requirements'),
    onEvent: (e) => events.push(e),
  });
  const log = events
    .filter((e) => e.kind === 'log')
    .map((e) => e.data.text)
    .join('');
  return { outcome, log };
}

describe('Galaxy requirements in a run', () => {
  it.each(['off', 'bwrap'] as const)(
    'are installed once into the cache and read by the playbook (sandbox %s)',
    async (mode) => {
      const { outcome, log } = await run(mode);
      expect(outcome.conclusion).toBe('succeeded');
      expect(log).toMatch(/hello from the role/);
      expect(log).toMatch(/"msg": "inner"/);
      // Nothing of Baton's own prints the cache path (the data directory's).
      expect(log).not.toContain(dataDir);
      const entries = fs.readdirSync(path.join(dataDir, 'requirements', 'prj_requirements'));
      expect(entries.filter((e) => !e.includes('.tmp-'))).toHaveLength(1);
      const planted = fs.existsSync(
        path.join(dataDir, 'requirements', 'prj_requirements', entries[0]!, 'roles', 'planted'),
      );
      // Without the sandbox the playbook can write there (same user); in it the cache is read-only.
      expect(planted).toBe(mode === 'off');
      if (mode === 'off') {
        expect(log).toMatch(/installing requirements/);
        fs.rmSync(path.join(dataDir, 'requirements', 'prj_requirements', entries[0]!, 'roles', 'planted'));
      } else expect(log).toMatch(/using the cache/);
    },
    120_000,
  );
});
