// The access matrix (issue 19): for every kind of stored object and every kind of caller (the owner, a grantee with
// `use`, one with `manage`, one through a team, a stranger, a viewer, an admin), every read, change, delete and action
// answers what the ONE table in access-matrix.rules.ts says, on both databases. An object the caller may not see
// answers the very 404 of an unknown id, and never shows up in lists, run streams, fleet, host history, task trends,
// drift, or what the AI helpers send the model.
import type http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { GrantLevel, Role } from '@baton/contracts';
import { DIALECTS } from '@baton/db/testing';
import { createRepo, tempDir } from '@baton/executor/testing';
import supertest, { type Response } from 'supertest';
import { type FakeAiProvider, startFakeAiProvider } from '../testing/ai-fake-provider.js';
import { bearer, createHarness, type Harness, runFinished } from '../testing/harness.js';
import { expectedAnswer, type Kind, LISTABLE, RULES, type Standing } from './access-matrix.rules.js';

type Method = 'get' | 'post' | 'put' | 'delete';
const ACTORS = ['owner', 'use', 'manage', 'team', 'stranger', 'viewer', 'admin'] as const;
type Actor = (typeof ACTORS)[number];
/** What each caller holds on an object the owner made and shared (the viewer's `manage` grant tests rule 2). */
const GRANTED: Record<Actor, GrantLevel | null> = {
  owner: 'manage',
  use: 'use',
  manage: 'manage',
  team: 'use',
  stranger: null,
  viewer: 'manage',
  admin: 'manage',
};
/** Objects that take no grants (rule 3's creator grant is all there is): only their creator (and admins) see them. */
const UNGRANTABLE: ReadonlySet<Kind> = new Set([]);
const UNKNOWN = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl';
const LOCAL = 'ansible_connection=local ansible_python_interpreter=/usr/bin/python3';

describe.each(DIALECTS)('access matrix on %s', (dialect) => {
  const tag = `${dialect}${Date.now().toString(36)}`;
  /** Names only the owner's objects carry: searched for in everything a stranger receives. */
  const SECRET = {
    host: `hidden-host-${tag}.example`,
    task: `hidden task ${tag}`,
    inventory: `hidden inventory ${tag}`,
    project: `hidden project ${tag}`,
  };
  const PLAYBOOK = `- hosts: all\n  gather_facts: false\n  tasks:\n    - name: ${SECRET.task}\n      ansible.builtin.command: echo hi\n`;
  const root = tempDir(`baton-matrix-${dialect}`);
  const repo = createRepo(root);
  fs.writeFileSync(path.join(repo.dir, 'site.yml'), PLAYBOOK);
  repo.git('add', '-A');
  repo.git('commit', '-q', '-m', 'site');

  let h: Harness;
  let fake: FakeAiProvider;
  let server: http.Server;
  let api: ReturnType<typeof supertest>;
  const who = {} as Record<Actor, { id: string; token: string; role: Role }>;
  let granteeTeam: string;
  let operations: Map<string, { method: Method; path: string }>;
  /** The shared object of each kind (never deleted); `fresh` makes more for the operations that destroy one. */
  const shared = {} as Record<Kind, string>;
  let n = 0;
  const uniq = (stem: string) => `${stem} ${++n} ${tag}`;

  const send = (method: Method, url: string, token: string, body?: unknown) => {
    const req = api[method](url).set(bearer(token));
    return body === undefined ? req : req.send(body as object);
  };
  const created = async (url: string, token: string, body: unknown): Promise<string> => {
    const res = await send('post', url, token, body);
    if (res.status !== 201) throw new Error(`POST ${url}: ${res.status} ${res.text}`);
    return res.body.id as string;
  };
  const grant = (object: string, subject: string, level: GrantLevel) =>
    created('/v1/grants', who.admin.token, { subject, object, level });

  /** One object of `kind` made by the owner and shared as GRANTED says; for `grant`: the `use` grant on a credential. */
  async function fresh(kind: Kind): Promise<string> {
    const owner = who.owner.token;
    const make: Partial<Record<Kind, () => Promise<string>>> = {
      credential: () =>
        created('/v1/credentials', owner, { name: uniq('cred'), type: 'token', inputs: { token: 't' } }),
      project: () => created('/v1/projects', owner, { name: uniq('prj'), git_url: repo.url }),
      inventory: () => created('/v1/inventories', owner, { name: uniq('inv'), content: `${SECRET.host} ${LOCAL}\n` }),
      'inventory source': () =>
        created('/v1/inventory-sources', owner, {
          name: uniq('src'),
          kind: 'url',
          inventory_id: shared.inventory,
          url: 'https://inventory.example.invalid/x.json',
        }),
      template: () =>
        created('/v1/templates', owner, {
          name: uniq('tpl'),
          kind: 'run',
          spec: { playbook: PLAYBOOK, inventory_id: shared.inventory },
        }),
      schedule: () =>
        created('/v1/schedules', owner, {
          name: uniq('sch'),
          cron: '0 3 * * *',
          enabled: false,
          target: { run: { playbook: PLAYBOOK, inventory_id: shared.inventory } },
        }),
      trigger: () =>
        created('/v1/triggers', owner, {
          name: uniq('trg'),
          target: { run: { project_id: shared.project, playbook: 'site.yml', inventory_id: shared.inventory } },
        }),
      notifier: () =>
        created('/v1/notifiers', owner, {
          name: uniq('ntf'),
          kind: 'webhook',
          config: { url: 'http://127.0.0.1:9/hook' },
          events: ['run.failed'],
        }),
      team: () => created('/v1/teams', owner, { name: uniq('team') }),
      token: () => created('/v1/tokens', owner, { name: uniq('tok'), expires_in_days: 1 }),
      user: () =>
        created('/v1/users', who.admin.token, {
          username: uniq('target').replace(/ /g, '-'),
          password: 'correct horse battery',
          role: 'viewer',
        }),
      policy: () =>
        created('/v1/policies', who.admin.token, {
          name: uniq('pol'),
          enabled: false,
          match: { origins: ['import'], check: true },
        }),
    };
    if (kind === 'grant') {
      const credential = await fresh('credential');
      const grants = (await send('get', `/v1/grants?object=${credential}&subject=${who.use.id}`, who.admin.token))
        .body as Array<{ id: string }>;
      return grants[0]!.id;
    }
    const id = await make[kind]!();
    if (!['token', 'user', 'policy'].includes(kind) && !UNGRANTABLE.has(kind)) {
      await grant(id, who.use.id, 'use');
      await grant(id, who.manage.id, 'manage');
      await grant(id, granteeTeam, 'use');
      await grant(id, who.viewer.id, 'manage');
    }
    return id;
  }

  /** What `actor` holds for a rule on `kind` (the level on the object itself, or for runs and grants on what they name). */
  function standing(kind: Kind, actor: Actor): Standing {
    const role = who[actor].role;
    const granted = UNGRANTABLE.has(kind) ? (actor === 'owner' ? 'manage' : null) : GRANTED[actor];
    if (kind === 'run' || kind === 'pipeline')
      return { role, level: GRANTED[actor], self: actor === 'owner', usesAll: GRANTED[actor] !== null };
    if (kind === 'grant') return { role, level: GRANTED[actor], self: actor === 'use' };
    return { role, level: granted, self: actor === 'owner' };
  }

  beforeAll(async () => {
    fake = await startFakeAiProvider();
    h = await createHarness(dialect, { executors: { count: 1 } });
    server = await new Promise<http.Server>((resolve) => {
      const s = h.app.listen(0, '127.0.0.1', () => resolve(s));
    });
    api = supertest(server);
    const doc = (await api.get('/v1/openapi.json')).body as {
      paths: Record<string, Partial<Record<Method, { operationId: string }>>>;
    };
    operations = new Map(
      Object.entries(doc.paths).flatMap(([p, item]) =>
        (['get', 'post', 'put', 'delete'] as const).flatMap((m) =>
          item[m] ? [[item[m].operationId, { method: m, path: p }] as const] : [],
        ),
      ),
    );
    const [owner, use, manage, team, stranger, viewer] = await Promise.all([
      h.user('operator'),
      h.user('operator'),
      h.user('operator'),
      h.user('operator'),
      h.user('operator'),
      h.user('viewer'),
    ]);
    Object.assign(who, {
      owner: { ...owner, role: 'operator' },
      use: { ...use, role: 'operator' },
      manage: { ...manage, role: 'operator' },
      team: { ...team, role: 'operator' },
      stranger: { ...stranger, role: 'operator' },
      viewer: { ...viewer, role: 'viewer' },
      admin: { ...h.admin, role: 'admin' },
    });
    granteeTeam = await created('/v1/teams', who.admin.token, { name: uniq('grantees') });
    expect((await send('post', `/v1/teams/${granteeTeam}/members`, who.admin.token, { user_id: team.id })).status).toBe(
      201,
    );
    const ai = await send('put', '/v1/settings/ai', who.admin.token, {
      provider: 'openai',
      base_url: `${fake.url}/v1`,
      model: 'matrix-model',
      api_key: 'sk-matrix',
      timeout_s: 5,
    });
    expect(ai.status).toBe(200);
    fake.reply(() => ({ answer: 'nothing to report', citations: [] }));

    shared.inventory = await fresh('inventory');
    await send('put', `/v1/inventories/${shared.inventory}`, who.owner.token, {
      name: SECRET.inventory,
      content: `${SECRET.host} ${LOCAL}\n`,
    });
    // The runs go first: the executor works through them while the other objects are made.
    shared.run = await created('/v1/runs', who.owner.token, { playbook: PLAYBOOK, inventory_id: shared.inventory });
    shared.pipeline = await created('/v1/pipelines', who.owner.token, {
      inventory_id: shared.inventory,
      steps: [{ name: 'only', playbook: PLAYBOOK }],
    });
    const check = await created('/v1/runs', who.owner.token, {
      playbook: PLAYBOOK,
      inventory_id: shared.inventory,
      check: true,
    });
    shared.project = await fresh('project');
    await send('put', `/v1/projects/${shared.project}`, who.owner.token, { name: SECRET.project });
    const rest: Kind[] = [
      'credential',
      'inventory source',
      'template',
      'schedule',
      'trigger',
      'notifier',
      'team',
      'grant',
      'token',
      'user',
      'policy',
    ];
    await Promise.all(rest.map(async (kind) => (shared[kind] = await fresh(kind))));
    for (const id of [shared.run, shared.pipeline, check]) await runFinished(h, id, who.admin.token);
  }, 600_000);

  afterAll(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await h?.close();
    await fake?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  /** The request of `operation` on object `id`, with a body it accepts. */
  function request(operation: string, id: string): { method: Method; url: string; body?: unknown } {
    const op = operations.get(operation);
    if (!op) throw new Error(`${operation} is not in /v1/openapi.json`);
    const url = op.path.replace('{id}', id).replace('{userID}', who.stranger.id).replace('{host}', 'matrix.example');
    const bodies: Record<string, () => unknown> = {
      updateCredential: () => ({ name: uniq('cred') }),
      updateProject: () => ({ name: uniq('prj') }),
      updateInventory: () => ({ name: uniq('inv'), content: `${SECRET.host} ${LOCAL}\n` }),
      updateInventorySource: () => ({
        name: uniq('src'),
        kind: 'url',
        inventory_id: shared.inventory,
        url: 'https://inventory.example.invalid/y.json',
      }),
      updateTemplate: () => ({ name: uniq('tpl') }),
      updateSchedule: () => ({ name: uniq('sch') }),
      updateTrigger: () => ({ name: uniq('trg') }),
      updateNotifier: () => ({ name: uniq('ntf') }),
      launchTemplate: () => ({}),
      addTeamMember: () => ({ user_id: who.stranger.id }),
      updateUser: () => ({ role: 'viewer' }),
      updatePolicy: () => ({ name: uniq('pol'), enabled: false, match: { origins: ['import'], check: true } }),
      replaceInventoryKnownHosts: () => ({ known_hosts: '' }),
      replaceProjectKnownHosts: () => ({ known_hosts: '' }),
      pinInventoryHostKey: () => ({ keys: KEY }),
      pinProjectHostKey: () => ({ keys: KEY }),
    };
    return { method: op.method, url, body: bodies[operation]?.() };
  }

  const PREFIX: Record<Kind, string> = {
    credential: 'cred',
    project: 'prj',
    inventory: 'inv',
    'inventory source': 'src',
    template: 'tpl',
    schedule: 'sch',
    trigger: 'trg',
    notifier: 'ntf',
    team: 'team',
    grant: 'grant',
    token: 'tok',
    user: 'usr',
    policy: 'pol',
    run: 'run',
    pipeline: 'run',
    'inventory known hosts': 'inv',
    'project known hosts': 'prj',
  };
  const objectOf = (kind: Kind) =>
    kind === 'inventory known hosts'
      ? shared.inventory
      : kind === 'project known hosts'
        ? shared.project
        : shared[kind];

  it('answers every read, change, delete and action as the one rule says, for every kind of caller', async () => {
    const wrong: string[] = [];
    let checked = 0;
    const tally = { ok: 0, 403: 0, 404: 0 };
    for (const rule of RULES) {
      // The answer to an unknown id of this kind: a hidden object must answer it word for word.
      const unknownId = `${PREFIX[rule.kind]}_${UNKNOWN}`;
      const u = request(rule.operation, unknownId);
      const unknown = await send(u.method, u.url, who.admin.token, u.body);
      const sameAsUnknown = (res: Response, id: string) =>
        res.status === 404 &&
        res.body?.type === unknown.body?.type &&
        res.body?.detail === String(unknown.body?.detail).replace(unknownId, id);
      await Promise.all(
        ACTORS.map(async (actor) => {
          const id = rule.destroys ? await fresh(rule.kind) : objectOf(rule.kind);
          const { method, url, body } = request(rule.operation, id);
          const res = await send(method, url, who[actor].token, body);
          checked++;
          const expected = expectedAnswer(rule, standing(rule.kind, actor));
          tally[expected]++;
          const what = `${rule.operation} on a ${rule.kind} as ${actor} (needs ${rule.needs}): expected ${expected}, got ${res.status} ${String(res.body?.detail ?? '').slice(0, 120)}`;
          if (res.status >= 500) wrong.push(what);
          else if (expected === 404 && !sameAsUnknown(res, id)) wrong.push(`${what} (not the unknown id's 404)`);
          else if (expected === 403 && res.status !== 403) wrong.push(what);
          else if (expected === 'ok' && (res.status === 401 || res.status === 403 || sameAsUnknown(res, id)))
            wrong.push(what);
          if (expected !== 'ok' && JSON.stringify(res.body ?? '').includes(SECRET.host))
            wrong.push(`${what}: the refusal names a hidden host`);
        }),
      );
    }
    expect(wrong).toEqual([]);
    expect(checked).toBe(RULES.length * ACTORS.length);
    // Every kind of answer was expected many times: the table is no "everyone may do everything".
    for (const count of Object.values(tally)) expect(count).toBeGreaterThan(50);
  }, 600_000);

  it('answers pins of one host key sent at the same moment with 200 or 409, never a 500', async () => {
    // Found by the matrix on PostgreSQL: two pins at once both deleted, then the later insert broke the unique key.
    const url = `/v1/inventories/${shared.inventory}/known-hosts/race.example`;
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => send('put', url, who.owner.token, { keys: KEY })),
    );
    const statuses = answers.map((res) => res.status);
    expect(statuses.filter((status) => status !== 200 && status !== 409)).toEqual([]);
    expect(statuses).toContain(200);
    const stored = await send('get', `/v1/inventories/${shared.inventory}/known-hosts`, who.owner.token);
    expect((stored.body.items as Array<{ host: string }>).filter((k) => k.host === 'race.example')).toHaveLength(1);
  });

  it('lists an object exactly to the callers who may see it', async () => {
    const lists: Array<[Kind, string]> = [
      ['credential', '/v1/credentials'],
      ['project', '/v1/projects'],
      ['inventory', '/v1/inventories'],
      ['inventory source', '/v1/inventory-sources'],
      ['template', '/v1/templates'],
      ['schedule', '/v1/schedules'],
      ['trigger', '/v1/triggers'],
      ['notifier', '/v1/notifiers'],
      ['team', '/v1/teams'],
      ['grant', '/v1/grants'],
      ['token', '/v1/tokens'],
      ['user', '/v1/users'],
      ['run', '/v1/runs'],
      ['pipeline', '/v1/runs'],
    ];
    const wrong: string[] = [];
    for (const [kind, url] of lists) {
      const get = RULES.find((r) => r.kind === kind && /^get/.test(r.operation))!;
      await Promise.all(
        ACTORS.filter((a) => !(kind === 'token' && a === 'admin')).map(async (actor) => {
          const res = await send('get', `${url}?limit=500`, who[actor].token);
          const ids = (res.body as Array<{ id: string }>).map((x) => x.id);
          const shown = ids.includes(shared[kind]);
          const expected = LISTABLE.has(kind) || expectedAnswer(get, standing(kind, actor)) === 'ok';
          if (res.status !== 200 || shown !== expected)
            wrong.push(`GET ${url} as ${actor}: ${res.status}, lists ${shared[kind]}: ${shown}, expected ${expected}`);
        }),
      );
    }
    expect(wrong).toEqual([]);
  });

  it('keeps hidden runs and hosts out of fleet, host history, task trends and drift', async () => {
    const urls = [
      '/v1/fleet?limit=500',
      `/v1/hosts/${SECRET.host}/runs`,
      '/v1/tasks?limit=500',
      '/v1/drift?limit=500',
      '/v1/drift/unassessed?limit=500',
      `/v1/runs?host=${SECRET.host}`,
    ];
    // A host the caller has no run on answers like a host never seen (a 404 naming only the host asked for).
    const neverSeen = await send('get', '/v1/hosts/never-seen.example/runs', who.stranger.token);
    const seen = async (actor: Actor) => {
      const answers = await Promise.all(urls.map((url) => send('get', url, who[actor].token)));
      for (const [i, res] of answers.entries()) {
        if (res.status === 404 && urls[i]!.startsWith('/v1/hosts/')) {
          expect(neverSeen.status).toBe(404);
          expect(res.body.detail).toBe(String(neverSeen.body.detail).replace('never-seen.example', SECRET.host));
          continue; // it echoes the name the caller sent, and nothing else
        }
        expect([urls[i], res.status]).toEqual([urls[i], 200]);
      }
      return answers
        .filter((res) => res.status === 200)
        .map((res) => res.text)
        .join('\n');
    };
    const stranger = await seen('stranger');
    for (const secret of [SECRET.host, SECRET.task, shared.run, shared.pipeline])
      expect(stranger).not.toContain(secret);
    // The same questions from callers who may see the runs find them: the stranger's answers are empty for a reason.
    for (const actor of ['use', 'team', 'viewer'] as const) {
      const text = await seen(actor);
      expect(text).toContain(SECRET.host);
      expect(text).toContain(SECRET.task);
      expect(text).toContain(shared.run);
    }
  });

  it('grounds the AI helpers only in what the caller may see', async () => {
    const prompt = async (actor: Actor, url: string, body: unknown) => {
      const before = fake.requests.length;
      const res = await send('post', url, who[actor].token, body);
      expect(res.status).not.toBe(500);
      expect(fake.requests.length).toBe(before + 1);
      return fake.requests.at(-1)!.raw;
    };
    for (const [url, body] of [
      ['/v1/ai/ask', { question: 'Which hosts failed lately?' }],
      ['/v1/ai/propose-run', { request: 'run the hidden task everywhere' }],
    ] as const) {
      // The stranger holds no grant at all: nothing the owner made (every name here carries `tag`) may reach the model.
      const hidden = await prompt('stranger', url, body);
      for (const secret of [...Object.values(SECRET), shared.run, shared.inventory, shared.project, tag])
        expect(hidden).not.toContain(secret);
      // A caller who may see them gets them into the same prompt: the check above can fail.
      expect(await prompt('use', url, body)).toContain(tag);
    }
    // A hidden run cannot be explained: the unknown id's 404, and the model is never asked.
    const before = fake.requests.length;
    const explain = await send('post', `/v1/runs/${shared.run}/explain`, who.stranger.token);
    expect(explain.status).toBe(404);
    expect(explain.body.detail).toBe(`run ${shared.run} not found`);
    expect(fake.requests.length).toBe(before);
  });
});
