// What ties the launchers together (issue 11): every run records how it started and GET /v1/runs filters by it, and an
// object a template, schedule or trigger names cannot be deleted from under it (409 naming it). Both databases.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Run } from '@baton/contracts';
import { DIALECTS } from '@baton/db/testing';
import { createRepo, tempDir } from '@baton/executor/testing';
import { bearer, createHarness, expectProblem, type Harness } from '../testing/harness.js';

const PLAYBOOK = '- hosts: all\n  gather_facts: false\n  tasks: []\n';
let n = 0;
const unique = (stem: string) => `${stem}-${++n}-${Date.now().toString(36)}`;

describe.each(DIALECTS)('launching on %s', (dialect) => {
  let h: Harness;
  let auth: Record<string, string>;
  const root = tempDir(`baton-launching-${dialect}`);
  const repo = createRepo(root);
  const made: Record<string, string> = {};

  const post = async (path: string, body: Record<string, unknown>, token = h.admin.token) => {
    const res = await h.http.post(path).set(bearer(token)).send(body);
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${res.text}`);
    return res.body as { id: string } & Record<string, unknown>;
  };
  const list = async (query: string): Promise<string[]> => {
    const res = await h.http.get(`/v1/runs?${query}`).set(auth);
    expect(res.status).toBe(200);
    return (res.body as Run[]).map((r) => r.id);
  };

  beforeAll(async () => {
    h = await createHarness(dialect);
    auth = bearer(h.admin.token);
    made.inv = (await post('/v1/inventories', { name: unique('inv'), content: 'web1\nweb2\n' })).id;
    made.cred = (
      await post('/v1/credentials', { name: unique('env'), type: 'env', inputs: { variables: { A: 'b' } } })
    ).id;
    made.prj = (await post('/v1/projects', { name: unique('prj'), git_url: repo.url })).id;
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  it('every run records its origin; GET /v1/runs filters by origin and by schedule', async () => {
    const api = await post('/v1/runs', { playbook: PLAYBOOK, inventory_id: made.inv });
    expect(api).toMatchObject({ origin: 'api', template_id: null, schedule_id: null, trigger_id: null });
    const pipeline = await post('/v1/pipelines', { inventory_id: made.inv, steps: [{ playbook: PLAYBOOK }] });
    const schedule = await post('/v1/schedules', {
      name: unique('sch'),
      cron: '* * * * *',
      target: { run: { playbook: PLAYBOOK, inventory_id: made.inv } },
    });
    const [fired] = await h.services.scheduler.tick(new Date(Date.now() + 5 * 60_000));
    expect(fired).toMatchObject({ scheduleId: schedule.id, claimed: true, error: null });
    const run = (await h.http.get(`/v1/runs/${fired!.runId}`).set(auth)).body as Run;
    expect(run).toMatchObject({ origin: 'schedule', schedule_id: schedule.id, template_id: null, trigger_id: null });

    expect(await list(`origin=schedule&limit=500`)).toEqual([run.id]);
    expect(await list(`schedule=${schedule.id}`)).toEqual([run.id]);
    const fromApi = await list('origin=api&limit=500');
    expect(fromApi).toEqual(expect.arrayContaining([api.id, pipeline.id]));
    expect(fromApi).not.toContain(run.id);
    expect(await list(`schedule=sch_01ARZ3NDEKTSV4RRFFQ69G5FAV`)).toEqual([]);
    expect(await list(`trigger=trg_01ARZ3NDEKTSV4RRFFQ69G5FAV`)).toEqual([]);
    expect(await list(`template=tpl_01ARZ3NDEKTSV4RRFFQ69G5FAV`)).toEqual([]);
    // A pipeline's steps carry its origin too, and are listed with include_shards only.
    const steps = (await h.http.get(`/v1/runs/${pipeline.id}/steps`).set(auth)).body as Run[];
    expect(steps.map((s) => s.origin)).toEqual(['api']);
    expect(await list('origin=api&limit=500')).not.toContain(steps[0]!.id);
    expect(await list('origin=api&limit=500&include_shards=true')).toContain(steps[0]!.id);

    for (const [query, field] of [
      ['origin=cron', 'query.origin'],
      ['schedule=prj_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'query.schedule'],
      ['trigger=nope', 'query.trigger'],
      ['template=', 'query.template'],
    ] as const)
      expectProblem(await h.http.get(`/v1/runs?${query}`).set(auth), 400, field);
  });

  it('a push that launches a template records both: origin trigger, template_id and trigger_id; each filter finds it', async () => {
    const template = await post('/v1/templates', {
      name: unique('tpl'),
      kind: 'run',
      spec: { playbook: 'site.yml', project_id: made.prj, inventory_id: made.inv },
    });
    const launched = await post(`/v1/templates/${template.id}/launch`, {});
    expect(launched).toMatchObject({ origin: 'template', template_id: template.id, trigger_id: null });
    const trigger = await post('/v1/triggers', {
      name: unique('trg'),
      require_signature: false,
      target: { template_id: template.id },
    });
    const commit = repo.head();
    const hook = await h.http
      .post(`/hooks/${trigger.token as string}`)
      .set('Content-Type', 'application/json')
      .set('X-GitHub-Event', 'push')
      .set('X-GitHub-Delivery', `d-${dialect}`)
      .send(JSON.stringify({ ref: 'refs/heads/main', after: commit, repository: { clone_url: repo.url } }));
    expect(hook.status).toBe(202);
    expect(hook.body).toMatchObject({ fired: true, run_id: expect.any(String) });
    const run = (await h.http.get(`/v1/runs/${hook.body.run_id as string}`).set(auth)).body as Run;
    expect(run).toMatchObject({
      origin: 'trigger',
      template_id: template.id,
      trigger_id: trigger.id,
      commit,
      ref: commit,
    });
    expect(await list(`trigger=${trigger.id}`)).toEqual([run.id]);
    expect(await list(`template=${template.id}`)).toEqual([run.id, launched.id]);
    expect(await list(`template=${template.id}&origin=template`)).toEqual([launched.id]);
    expect(await list(`origin=trigger&limit=500`)).toEqual([run.id]);
  });

  it('a project, inventory or credential a schedule names answers 409 on delete, naming only what the caller may see', async () => {
    const inv = (await post('/v1/inventories', { name: unique('inv'), content: 'web1\n' })).id;
    const cred = (
      await post('/v1/credentials', { name: unique('env'), type: 'env', inputs: { variables: { A: 'b' } } })
    ).id;
    const prj = (await post('/v1/projects', { name: unique('prj'), git_url: repo.url })).id;
    const schedule = await post('/v1/schedules', {
      name: unique('nightly'),
      cron: '0 3 * * *',
      target: { run: { playbook: 'site.yml', project_id: prj, inventory_id: inv, credential_ids: [cred] } },
    });
    for (const [path, id] of [
      ['inventories', inv],
      ['credentials', cred],
      ['projects', prj],
    ] as const) {
      const res = await h.http.delete(`/v1/${path}/${id}`).set(auth);
      expectProblem(res, 409);
      expect(res.body.detail).toContain(`schedule ${schedule.id}`);
    }
    // An operator managing the inventory but without a grant on the schedule learns only that something uses it.
    const op = await h.user('operator');
    expect(
      (await h.http.post('/v1/grants').set(auth).send({ subject: op.id, object: inv, level: 'manage' })).status,
    ).toBe(201);
    const hidden = await h.http.delete(`/v1/inventories/${inv}`).set(bearer(op.token));
    expectProblem(hidden, 409);
    expect(hidden.body.detail).not.toContain(schedule.id);
    expect(hidden.body.detail).toContain('1 more you cannot see');
    // Once the schedule is gone, so is the reference.
    expect((await h.http.delete(`/v1/schedules/${schedule.id}`).set(auth)).status).toBe(204);
    for (const [path, id] of [
      ['inventories', inv],
      ['credentials', cred],
      ['projects', prj],
    ] as const)
      expect((await h.http.delete(`/v1/${path}/${id}`).set(auth)).status).toBe(204);
  });
});
