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
import { createWarmLaunches, type WarmLaunches } from './run-launch.js';
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

async function run(mode: SandboxMode, launches?: WarmLaunches) {
  const events: RunEvent[] = [];
  let warm: boolean | undefined;
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
    launches,
    onSpawn: (_pid, _at, w) => (warm = w),
  });
  const log = events
    .filter((e) => e.kind === 'log')
    .map((e) => e.data.text)
    .join('');
  return { outcome, log, warm };
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

  it('never start in a launch made ahead without their mounts: the run starts its own', async () => {
    const launches = createWarmLaunches();
    try {
      const first = await runPlaybook(
        {
          run_id: 'run_inline_first',
          playbook: { source: 'inline', content: '- hosts: all\n  gather_facts: false\n  tasks: []\n' },
          inventory: { content: 'localhost ansible_connection=local\n', format: 'ini' },
          check: false,
          credentials: [],
        },
        { workRoot: root, sandbox: { mode: 'bwrap', hidden: [dataDir] }, onEvent: () => {}, launches },
      );
      expect(first.conclusion).toBe('succeeded');
      const { outcome, log, warm } = await run('bwrap', launches);
      expect(warm).toBe(false);
      expect(outcome.conclusion).toBe('succeeded');
      expect(log).toMatch(/hello from the role/);
      expect(log).toMatch(/using the cache/);
    } finally {
      launches.close();
    }
  }, 120_000);
});
