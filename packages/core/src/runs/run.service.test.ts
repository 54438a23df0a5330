// The runs service and the bundle builder against real repositories on both dialects, with the real ingester's
// finish. The executor's git and ansible functions and the queue are small fakes here (core never imports
// them); apps/api/src/runs/run.routes.test.ts runs the same paths with the real ones.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { GitError, type GitErrorCode, RunBundle, type SubmitRunBody } from '@baton/contracts';
import type { RunRow } from '@baton/db';
import { createTestDatabase, DIALECTS, type TestDatabase } from '@baton/db/testing';
import { createAuthorizer, type Principal } from '../authz/authorize.js';
import { systemClock } from '../common/clock.js';
import { newId } from '../common/ids.js';
import { createCredentialService } from '../credentials/credential.service.js';
import { generateMasterKey, Keyring } from '../crypto/secret-box.js';
import { createInventoryService } from '../inventories/inventory.service.js';
import { createProjectService } from '../projects/project.service.js';
import { createRunAccess } from './run-access.js';
import { createRunDecisions } from './run-decision.js';
import { createRunHolder } from './run-hold.js';
import { createRunBundleBuilder } from './run-bundle.js';
import { createRunIngester, type RunIngester } from './run-ingest.js';
import { createRunPreparer, type InventoryTool, type PlaybookResolver } from './run-prepare.js';
import { createRunService, type RunServiceDeps } from './run.service.js';

const COMMIT = 'c'.repeat(40);
const PLAYBOOK = '- hosts: all\n  tasks: []\n';
const ADMIN: Principal = { id: newId('usr'), username: 'root', role: 'admin' };

/** Error the way the executor throws it. */
const gitError = (code: GitErrorCode, reason: string) => new GitError(code, reason);

async function rejection(promise: Promise<unknown>): Promise<Error & { errors?: Array<{ path: string }> }> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(Error);
  return err as Error & { errors?: Array<{ path: string }> };
}

describe.each(DIALECTS)('run service on %s', (dialect) => {
  let tdb: TestDatabase;
  let ingester: RunIngester;
  const keyring = new Keyring(generateMasterKey());
  const enqueued: string[] = [];
  /** What the fake queue's cancel does; by default it holds nothing. */
  let onQueueCancel: (runId: string) => Promise<boolean> = async () => false;
  let resolvePlaybook: PlaybookResolver = async () => ({ commit: COMMIT, entry: 'file' });

  const build = () => {
    const { repos, transaction } = tdb.db;
    const authz = createAuthorizer({ grants: repos.grants, teams: repos.teams });
    const credentials = createCredentialService({
      credentials: repos.credentials,
      transaction,
      authz,
      keyring,
      clock: systemClock,
      usedBy: async () => [],
    });
    const inventories = createInventoryService({
      inventories: repos.inventories,
      inventorySources: repos.inventorySources,
      transaction,
      authz,
      clock: systemClock,
      parse: async () => ({ format: 'ini', list: {}, hosts: [], groups: [] }),
    });
    const projects = createProjectService({
      projects: repos.projects,
      knownHosts: repos.knownHosts,
      transaction,
      authz,
      clock: systemClock,
      credentials,
      git: { resolveBranchHead: async () => COMMIT },
      usedBy: async () => [],
    });
    const inventoryTool: InventoryTool = {
      parse: async () => ({ format: 'ini' }),
      hosts: async ({ limit }) => ({
        hosts: ['h1', 'h2', 'h3', 'h4', 'h5'].filter((h) => !limit || h !== 'h5'),
        list: {},
      }),
      forHosts: (_list, hosts) => JSON.stringify({ all: { hosts: Object.fromEntries(hosts.map((h) => [h, null])) } }),
    };
    const deps: RunServiceDeps = {
      runs: repos.runs,
      transaction,
      authz,
      access: createRunAccess({ runs: repos.runs, authz, teams: repos.teams }),
      runApprovals: repos.runApprovals,
      holder: createRunHolder({ policies: { listEnabled: async () => [] } }),
      decisions: createRunDecisions({
        transaction,
        runs: repos.runs,
        teams: repos.teams,
        publish: async () => {},
        enqueue: async ({ runId }) => void enqueued.push(runId),
        onError: () => {},
        clock: systemClock,
      }),
      clock: systemClock,
      projects,
      preparer: createRunPreparer({
        projects,
        resolvePlaybook: (o) => resolvePlaybook(o),
        inventories,
        credentials,
        inventoryTool,
        seal: (plaintext) => keyring.encrypt(plaintext),
      }),
      inventories,
      credentials,
      inventoryTool,
      queue: { enqueue: async ({ runId }) => void enqueued.push(runId), cancel: (id) => onQueueCancel(id) },
      finish: (...args) => ingester.finish(...args),
      advance: (id) => ingester.advance(id),
      retryPipeline: () => Promise.reject(new Error('no pipelines in this test')),
    };
    const bundles = createRunBundleBuilder({
      runs: repos.runs,
      projects: repos.projects,
      inventories: repos.inventories,
      knownHosts: repos.knownHosts,
      credentials,
    });
    return { runs: createRunService(deps), bundles, credentials, inventories, projects };
  };
  let s: ReturnType<typeof build>;

  beforeAll(async () => {
    tdb = await createTestDatabase(dialect);
    ingester = createRunIngester({ transaction: tdb.db.transaction, publish: async () => {}, clock: systemClock });
    s = build();
  });
  afterAll(async () => {
    await ingester.close();
    await tdb.drop();
  });
  beforeEach(() => {
    enqueued.length = 0;
    onQueueCancel = async () => false;
    resolvePlaybook = async () => ({ commit: COMMIT, entry: 'file' });
  });

  const row = async (id: string): Promise<RunRow> => (await tdb.db.repos.runs.findById(id))!;
  const inline = (over: Partial<SubmitRunBody> = {}): SubmitRunBody => ({
    playbook: PLAYBOOK,
    inventory: 'h1\nh2\n',
    ...over,
  });
  const newInventory = (content = 'h1\nh2\n') => s.inventories.create(ADMIN, { name: `inv ${newId('x')}`, content });

  describe('submit', () => {
    it('writes a split and its shards in one go, enqueues the shards in shard order and never the split', async () => {
      const split = await s.runs.submit(ADMIN, inline({ shards: 2, limit: 'not-h5' }));
      const shards = await tdb.db.repos.runs.children(split.id);
      expect(shards.map((x) => [x.shard_index, x.hosts])).toEqual([
        [0, ['h1', 'h3']],
        [1, ['h2', 'h4']],
      ]);
      expect(shards[0]!.inventory_content).toBe(JSON.stringify({ all: { hosts: { h1: null, h3: null } } }));
      expect(enqueued).toEqual(shards.map((x) => x.id));
      expect(await tdb.db.repos.audit.list({ action: 'run.submit', object: split.id }, { limit: 5 })).toHaveLength(1);
    });

    it('accepts a symlinked playbook; refuses a missing one (422 at body.playbook) and maps git failures to 422 at body.project_id', async () => {
      const project = await s.projects.create(ADMIN, {
        name: `prj ${newId('x')}`,
        git_url: 'file:///nowhere',
        branch: 'main',
      });
      const inventory = await newInventory();
      const body = { playbook: 'site.yml', project_id: project.id, inventory_id: inventory.id };
      resolvePlaybook = async () => ({ commit: COMMIT, entry: 'symlink' });
      expect(await s.runs.submit(ADMIN, body)).toMatchObject({ commit: COMMIT, playbook: 'site.yml' });
      resolvePlaybook = async () => ({ commit: COMMIT, entry: 'missing' });
      const missing = await rejection(s.runs.submit(ADMIN, body));
      expect(missing.name).toBe('UnprocessableError');
      expect(missing.errors).toEqual([expect.objectContaining({ path: 'body.playbook' })]);
      resolvePlaybook = async () => {
        throw gitError('bad_credential', 'the SSH key could not be loaded');
      };
      const refused = await rejection(s.runs.submit(ADMIN, body));
      expect(refused.name).toBe('UnprocessableError');
      expect(refused.message).toContain('the SSH key could not be loaded');
      expect(refused.errors).toEqual([expect.objectContaining({ path: 'body.project_id' })]);
    });
  });

  describe('cancel when the run moves meanwhile', () => {
    it('a pending run an executor claims during the cancel is asked to stop (accepted)', async () => {
      const run = await s.runs.submit(ADMIN, inline());
      onQueueCancel = async (id) => {
        // The executor's claim wins the race: the run is running and its lease is held.
        await ingester.claim(id, 'worker-1');
        onQueueCancel = async () => true;
        return true;
      };
      const result = await s.runs.cancel(ADMIN, run.id);
      expect(result.accepted).toBe(true);
      expect(result.run).toMatchObject({
        status: 'running',
        worker: 'worker-1',
        cancel_requested_at: expect.any(String),
      });
    });

    it('a running run that finishes on its own during the cancel is answered as finished, not as an error', async () => {
      const run = await s.runs.submit(ADMIN, inline());
      await ingester.claim(run.id, 'worker-1');
      onQueueCancel = async (id) => {
        await tdb.db.repos.runs.transition(id, ['running'], {
          status: 'finished',
          conclusion: 'succeeded',
          finished_at: new Date().toISOString(),
        });
        return false;
      };
      const result = await s.runs.cancel(ADMIN, run.id);
      expect(result).toMatchObject({ accepted: false, run: { status: 'finished', conclusion: 'succeeded' } });
    });

    it('a split with a running and a pending shard: the pending one ends now, the running one is asked to stop, the split ends canceled after it', async () => {
      const split = await s.runs.submit(ADMIN, inline({ shards: 2 }));
      const [first, second] = await tdb.db.repos.runs.children(split.id);
      expect(await ingester.claim(first!.id, 'worker-1')).toBe(true);
      onQueueCancel = async (id) => id === first!.id;
      const result = await s.runs.cancel(ADMIN, split.id);
      expect(result.accepted).toBe(true);
      expect(result.run).toMatchObject({ status: 'running', cancel_requested_at: expect.any(String) });
      expect(await row(second!.id)).toMatchObject({ status: 'finished', conclusion: 'canceled' });
      expect(await row(first!.id)).toMatchObject({ status: 'running', cancel_requested_at: expect.any(String) });
      // The executor stops ansible and reports the end of the shard: the split then concludes canceled.
      expect(await ingester.finish(first!.id, { conclusion: 'canceled', reason: 'canceled' }, ['running'])).toBe(true);
      expect(await row(split.id)).toMatchObject({ status: 'finished', conclusion: 'canceled' });
      const audit = await tdb.db.repos.audit.list({ action: 'run.cancel', object: split.id }, { limit: 5 });
      expect(audit.map((a) => a.summary)).toEqual([`canceled split ${split.id}: 1 shards finished, 1 stopping`]);
    });
  });

  describe('bundle builder', () => {
    it('builds an inline run with everything it carries, credentials revealed', async () => {
      const become = await s.credentials.create(ADMIN, {
        name: `b ${newId('x')}`,
        type: 'become_password',
        inputs: { password: 'pw-1' },
      });
      const env = await s.credentials.create(ADMIN, {
        name: `e ${newId('x')}`,
        type: 'env',
        inputs: { variables: { API_TOKEN: 'tok-1' } },
      });
      const run = await s.runs.submit(
        ADMIN,
        inline({
          limit: 'h1',
          extra_vars: { a: 1 },
          check: true,
          forks: 2,
          verbosity: 1,
          timeout_s: 30,
          credential_ids: [become.id, env.id],
        }),
      );
      const bundle = await s.bundles.build(run.id);
      expect(RunBundle.parse(bundle)).toEqual(bundle);
      expect(bundle).toEqual({
        run_id: run.id,
        playbook: { source: 'inline', content: PLAYBOOK },
        inventory: { content: 'h1\nh2\n', format: 'ini' },
        limit: 'h1',
        extra_vars: { a: 1 },
        check: true,
        forks: 2,
        verbosity: 1,
        timeout_s: 30,
        credentials: [
          { type: 'become_password', inputs: { password: 'pw-1' } },
          { type: 'env', inputs: { variables: { API_TOKEN: 'tok-1' } } },
        ],
      });
    });

    it("uses the project's current credential at the recorded commit, and the inventory's current content", async () => {
      const token = await s.credentials.create(ADMIN, {
        name: `t ${newId('x')}`,
        type: 'token',
        inputs: { token: 'old-token' },
      });
      const project = await s.projects.create(ADMIN, {
        name: `prj ${newId('x')}`,
        git_url: 'https://git.example.test/p.git',
        branch: 'main',
        credential_id: token.id,
      });
      const inventory = await newInventory('h1\n');
      const run = await s.runs.submit(ADMIN, {
        playbook: 'site.yml',
        project_id: project.id,
        inventory_id: inventory.id,
      });
      await s.credentials.update(ADMIN, token.id, { inputs: { token: 'new-token' } });
      await s.inventories.update(ADMIN, inventory.id, { name: inventory.name, content: 'h1\nh9\n' });
      const bundle = await s.bundles.build(run.id);
      expect(bundle.playbook).toEqual({
        source: 'project',
        path: 'site.yml',
        project_id: project.id,
        git: {
          url: 'https://git.example.test/p.git',
          commit: COMMIT,
          auth: { kind: 'token', token: 'new-token' },
          host_keys: { checking: 'accept_new', known_hosts: '' },
        },
      });
      expect(bundle.inventory).toEqual({
        content: 'h1\nh9\n',
        format: 'ini',
        host_keys: { checking: 'accept_new', known_hosts: '' },
      });
    });

    it("gives a shard its own inventory and never the split's limit; refuses to build a split", async () => {
      const split = await s.runs.submit(ADMIN, inline({ shards: 2, limit: 'not-h5' }));
      const [shard] = await tdb.db.repos.runs.children(split.id);
      const bundle = await s.bundles.build(shard!.id);
      // An inline inventory has no stored keys: nothing to check against but what ssh meets in the run.
      expect(bundle.inventory).toEqual({ content: shard!.inventory_content, format: 'yaml' });
      expect(bundle).not.toHaveProperty('limit');
      expect((await rejection(s.bundles.build(split.id))).name).toBe('ConflictError');
    });

    it("gives a shard of a stored inventory that inventory's host keys and policy, as they are at dispatch", async () => {
      const inventory = await newInventory('h1\nh2\nh3\n');
      const split = await s.runs.submit(ADMIN, { playbook: PLAYBOOK, inventory_id: inventory.id, shards: 2 });
      const [shard] = await tdb.db.repos.runs.children(split.id);
      await tdb.db.repos.knownHosts.replaceAll('inventory', inventory.id, [
        {
          scope: 'inventory',
          scope_id: inventory.id,
          host: 'h1',
          key_type: 'ssh-ed25519',
          key: 'AAAAC3NzaC1lZDI1NTE5AAAAIB',
          source: 'pinned',
          run_id: null,
          created_by: ADMIN.id,
          created_at: new Date().toISOString(),
        },
      ]);
      await tdb.db.repos.inventories.update(inventory.id, { host_key_checking: 'strict' });
      const bundle = await s.bundles.build(shard!.id);
      expect(bundle.inventory).toEqual({
        content: shard!.inventory_content,
        format: 'yaml',
        host_keys: { checking: 'strict', known_hosts: 'h1 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB\n' },
      });
    });

    it.each(['inventory', 'project', 'credential'] as const)(
      'throws RunInputMissingError naming a deleted %s',
      async (what) => {
        const cred = await s.credentials.create(ADMIN, {
          name: `v ${newId('x')}`,
          type: 'vault_password',
          inputs: { password: 'v' },
        });
        const project = await s.projects.create(ADMIN, {
          name: `prj ${newId('x')}`,
          git_url: 'https://git.example.test/p.git',
          branch: 'main',
        });
        const inventory = await newInventory();
        const run = await s.runs.submit(ADMIN, {
          playbook: 'site.yml',
          project_id: project.id,
          inventory_id: inventory.id,
          credential_ids: [cred.id],
        });
        const gone = { inventory: inventory.id, project: project.id, credential: cred.id }[what];
        if (what === 'inventory') expect(await tdb.db.repos.inventories.delete(gone)).toBe(true);
        if (what === 'project') expect(await tdb.db.repos.projects.delete(gone)).toBe('deleted');
        if (what === 'credential') expect(await tdb.db.repos.credentials.delete(gone)).toBe('deleted');
        const err = await rejection(s.bundles.build(run.id));
        expect(err.name).toBe('RunInputMissingError');
        expect(err.message).toContain(`${what} ${gone}`);
      },
    );
  });
});
