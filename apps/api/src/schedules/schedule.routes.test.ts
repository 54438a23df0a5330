// Schedules over HTTP on both databases: create, list, get, update, delete; refusals at the field; the target checked
// as a submission by the caller; launch references kept; grants on schedules.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DIALECTS } from '@baton/db/testing';
import { createRepo, tempDir } from '@baton/executor/testing';
import fs from 'node:fs';
import { bearer, createHarness, expectProblem, type Harness } from '../testing/harness.js';

const PLAYBOOK = '- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.ping:\n';
const INI = '[web]\nweb1\nweb2\n';
const UNKNOWN = {
  inv: 'inv_01ARZ3NDEKTSV4RRFFQ69G5FAV',
  prj: 'prj_01ARZ3NDEKTSV4RRFFQ69G5FAV',
  cred: 'cred_01ARZ3NDEKTSV4RRFFQ69G5FAV',
  sch: 'sch_01ARZ3NDEKTSV4RRFFQ69G5FAV',
  tpl: 'tpl_01ARZ3NDEKTSV4RRFFQ69G5FAV',
};
const RFC3339_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?[+-]\d{2}:\d{2}$/;
let seq = 0;
const unique = (stem: string) => `${stem} ${++seq} ${Date.now().toString(36)}`;

describe.each(DIALECTS)('schedules on %s', (dialect) => {
  let h: Harness;
  const root = tempDir(`baton-schedules-${dialect}`);
  const repo = createRepo(root);

  beforeAll(async () => {
    h = await createHarness(dialect);
  });
  afterAll(async () => {
    await h.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const repos = () => h.tdb.db.repos;
  const inlineTarget = { run: { playbook: PLAYBOOK, inventory: INI } };
  const post = (token: string, body: unknown) =>
    h.http
      .post('/v1/schedules')
      .set(bearer(token))
      .send(body as object);
  const create = async (token: string, over: Record<string, unknown> = {}) => {
    const res = await post(token, { name: unique('nightly'), cron: '30 2 * * *', target: inlineTarget, ...over });
    expect(res.status).toBe(201);
    return res.body as Record<string, unknown> & { id: string };
  };
  const createInventory = async (token: string) => {
    const res = await h.http
      .post('/v1/inventories')
      .set(bearer(token))
      .send({ name: unique('inv'), content: INI });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const createProject = async (token: string) => {
    const res = await h.http
      .post('/v1/projects')
      .set(bearer(token))
      .send({ name: unique('prj'), git_url: repo.url });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const grant = async (subject: string, object: string, level: 'use' | 'manage') => {
    const res = await h.http.post('/v1/grants').set(bearer(h.admin.token)).send({ subject, object, level });
    expect(res.status).toBe(201);
  };
  let fieldCaller: Awaited<ReturnType<Harness['user']>> | undefined;
  const refsOf = async (objectId: string) => (await repos().launchRefs.ownersOf(objectId)).map((o) => o.id);

  describe('create', () => {
    it('201 with Location, the defaults, the next due time in UTC and in its zone, an audit entry and a manage grant', async () => {
      const op = await h.user('operator');
      const name = unique('nightly deploy');
      const res = await post(op.token, { name, cron: '30 2 * * *', target: inlineTarget });
      expect(res.status).toBe(201);
      const id = res.body.id as string;
      expect(id).toMatch(/^sch_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(res.headers.location).toBe(`/v1/schedules/${id}`);
      expect(res.body).toEqual({
        id,
        name,
        cron: '30 2 * * *',
        timezone: 'UTC',
        enabled: true,
        target: inlineTarget,
        next_run_at: expect.stringMatching(/T02:30:00\.000Z$/),
        next_run_at_local: expect.stringMatching(/T02:30:00\+00:00$/),
        next_runs: expect.any(Array),
        last_run_id: null,
        last_fired_at: null,
        last_error: null,
        created_by: op.id,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      const next = new Date(res.body.next_run_at as string).getTime();
      // The next five due times, next_run_at first: one a day at 02:30 UTC.
      expect(res.body.next_runs).toEqual(
        [0, 1, 2, 3, 4].map((d) => new Date(next + d * 24 * 3600 * 1000).toISOString()),
      );
      expect(next).toBeGreaterThan(Date.now());
      expect(next - Date.now()).toBeLessThanOrEqual(24 * 3600 * 1000);
      expect((await h.http.get(`/v1/schedules/${id}`).set(bearer(op.token))).body).toEqual(res.body);
      const audit = await repos().audit.list({ object: id }, { limit: 5 });
      expect(audit.map((a) => a.action)).toEqual(['schedule.create']);
      expect(audit[0]!.actor).toBe(op.id);
      expect(audit[0]!.summary).not.toContain('ping');
      expect(await h.services.authz.levelOn({ id: op.id, username: op.username, role: 'operator' }, id)).toBe('manage');
      // Nothing was submitted by checking the target.
      expect((await h.http.get(`/v1/runs?schedule=${id}`).set(bearer(op.token))).body).toEqual([]);
      expect((await h.http.get('/v1/runs').set(bearer(h.admin.token))).body).toEqual([]);
    });

    it('reads the cron in its zone: next_run_at_local carries the zone’s offset; 6 fields run by the second', async () => {
      const op = await h.user('operator');
      const berlin = await create(op.token, { cron: '0 12 * * *', timezone: 'Europe/Berlin', enabled: false });
      expect(berlin).toMatchObject({ enabled: false, next_run_at: null, next_run_at_local: null, next_runs: [] });
      const put = await h.http.put(`/v1/schedules/${berlin.id}`).set(bearer(op.token)).send({ enabled: true });
      expect(put.status).toBe(200);
      expect(put.body.next_run_at_local).toMatch(RFC3339_OFFSET);
      expect(put.body.next_run_at_local).toMatch(/T12:00:00\+0[12]:00$/);
      const local = put.body.next_run_at_local as string;
      expect(new Date(local).toISOString()).toBe(put.body.next_run_at);
      const runs = put.body.next_runs as string[];
      expect(runs).toHaveLength(5);
      expect(runs[0]).toBe(put.body.next_run_at);
      const berlinClock = new Intl.DateTimeFormat('en-GB', {
        timeZone: 'Europe/Berlin',
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h23',
      });
      expect(runs.map((t) => berlinClock.format(new Date(t)))).toEqual(Array(5).fill('12:00'));
      expect(new Set(runs.map((t) => t.slice(0, 10))).size).toBe(5);
      expect((await h.http.get(`/v1/schedules/${berlin.id}`).set(bearer(op.token))).body.next_runs).toEqual(runs);

      const seconds = await create(op.token, { cron: '*/10 * * * * *', timezone: 'Asia/Kolkata' });
      expect(seconds.next_run_at_local).toMatch(/[0-5]0\+05:30$/);
      expect(new Date(seconds.next_run_at as string).getTime() - Date.now()).toBeLessThanOrEqual(10_000);
    });

    it('a project target is resolved now (a missing playbook or ref is a 422 inside body.target.run)', async () => {
      const op = await h.user('operator');
      const prj = await createProject(op.token);
      const ok = await create(op.token, { target: { run: { project_id: prj, playbook: 'site.yml', inventory: INI } } });
      expect(await refsOf(prj)).toContain(ok.id);
      const missing = await post(op.token, {
        name: unique('s'),
        cron: '* * * * *',
        target: { run: { project_id: prj, playbook: 'nope.yml', inventory: INI } },
      });
      expectProblem(missing, 422, 'body.target.run.playbook');
      const badRef = await post(op.token, {
        name: unique('s'),
        cron: '* * * * *',
        target: { run: { project_id: prj, playbook: 'site.yml', inventory: INI, ref: 'no-such-branch' } },
      });
      expectProblem(badRef, 422, 'body.target.run.ref');
    });

    it('needs use on everything the target names: someone else’s or unknown objects are 404, a viewer is 403', async () => {
      const owner = await h.user('operator');
      const other = await h.user('operator');
      const inv = await createInventory(owner.token);
      const prj = await createProject(owner.token);
      for (const target of [
        { run: { playbook: PLAYBOOK, inventory_id: inv } },
        { run: { playbook: 'site.yml', project_id: prj, inventory: INI } },
        { run: { playbook: PLAYBOOK, inventory_id: UNKNOWN.inv } },
        { run: { playbook: PLAYBOOK, inventory: INI, credential_ids: [UNKNOWN.cred] } },
      ]) {
        expectProblem(await post(other.token, { name: unique('s'), cron: '* * * * *', target }), 404);
      }
      const viewer = await h.user('viewer');
      expectProblem(await post(viewer.token, { name: unique('s'), cron: '* * * * *', target: inlineTarget }), 403);

      // With a use grant the same target is accepted, and the inventory is referenced by the schedule.
      await grant(other.id, inv, 'use');
      const s = await create(other.token, { target: { run: { playbook: PLAYBOOK, inventory_id: inv } } });
      expect(await refsOf(inv)).toEqual([s.id]);
      expect(await repos().schedules.list({ limit: 500 })).not.toContainEqual(
        expect.objectContaining({ created_by: viewer.id }),
      );
    });

    it.each([
      ['no name', { name: undefined }, 'body.name'],
      ['an empty name', { name: '   ' }, 'body.name'],
      ['no cron', { cron: undefined }, 'body.cron'],
      ['a number as cron', { cron: 5 }, 'body.cron'],
      ['4 fields', { cron: '* * * *' }, 'body.cron'],
      ['7 fields', { cron: '* * * * * * *' }, 'body.cron'],
      ['a minute out of range', { cron: '60 * * * *' }, 'body.cron'],
      ['an hour out of range', { cron: '0 24 * * *' }, 'body.cron'],
      ['a day that never comes', { cron: '0 0 30 2 *' }, 'body.cron'],
      ['garbage', { cron: 'every day at noon' }, 'body.cron'],
      ['letters', { cron: 'a b c d e' }, 'body.cron'],
      ['a macro', { cron: '@hourly' }, 'body.cron'],
      ['a zero step', { cron: '*/0 * * * *' }, 'body.cron'],
      ['a reversed range', { cron: '5-1 * * * *' }, 'body.cron'],
      ['an unknown zone', { timezone: 'Europe/Atlantis' }, 'body.timezone'],
      ['a path as zone', { timezone: '../../etc/localtime' }, 'body.timezone'],
      ['a number as zone', { timezone: 1 }, 'body.timezone'],
      ['enabled as text', { enabled: 'yes' }, 'body.enabled'],
      ['no target', { target: undefined }, 'body.target'],
      ['an empty target', { target: {} }, 'body.target'],
      ['two targets', { target: { ...inlineTarget, template_id: UNKNOWN.tpl } }, 'body.target'],
      [
        'answers without a template',
        { target: { ...inlineTarget, survey_answers: { a: 1 } } },
        'body.target.survey_answers',
      ],
      ['a run without playbook', { target: { run: { inventory: INI } } }, 'body.target.run.playbook'],
      [
        'a run with an unknown field',
        { target: { run: { playbook: PLAYBOOK, inventory: INI, nope: 1 } } },
        'body.target.run',
      ],
      ['a run without inventory', { target: { run: { playbook: PLAYBOOK } } }, 'body.target.run.inventory_id'],
      [
        'a run with both inventories',
        { target: { run: { playbook: PLAYBOOK, inventory: INI, inventory_id: UNKNOWN.inv } } },
        'body.target.run.inventory_id',
      ],
      ['a bad template id', { target: { template_id: 'prj_x' } }, 'body.target.template_id'],
      ['an unknown field', { colour: 'blue' }, 'body'],
    ])('400 at the field for %s', async (_what, over, path) => {
      const op = (fieldCaller ??= await h.user('operator'));
      const body: Record<string, unknown> = { name: unique('s'), cron: '* * * * *', target: inlineTarget, ...over };
      for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
      expectProblem(await post(op.token, body), 400, path);
    });

    it('400 for more shards than hosts, at body.target.run.shards; 201 for a split', async () => {
      const op = await h.user('operator');
      const tooMany = await post(op.token, {
        name: unique('s'),
        cron: '* * * * *',
        target: { run: { playbook: PLAYBOOK, inventory: INI, shards: 3 } },
      });
      expectProblem(tooMany, 400, 'body.target.run.shards');
      const split = await create(op.token, { target: { run: { playbook: PLAYBOOK, inventory: INI, shards: 2 } } });
      expect(split.target).toEqual({ run: { playbook: PLAYBOOK, inventory: INI, shards: 2 } });
    });

    it('409 for a duplicate name, on create and on rename', async () => {
      const op = await h.user('operator');
      const a = await create(op.token);
      const b = await create(op.token);
      expectProblem(await post(op.token, { name: a.name, cron: '* * * * *', target: inlineTarget }), 409);
      expectProblem(await h.http.put(`/v1/schedules/${b.id}`).set(bearer(op.token)).send({ name: a.name }), 409);
    });
  });

  describe('pipeline and template targets', () => {
    const createTemplate = async (token: string, body: Record<string, unknown>) => {
      const res = await h.http
        .post('/v1/templates')
        .set(bearer(token))
        .send({ name: unique('tpl'), ...body });
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    const SURVEY = [
      { variable: 'db_password', question: 'Database password?', type: 'password', required: true },
      { variable: 'region', question: 'Region?', type: 'choice', choices: ['eu', 'us'], required: true },
    ];

    it('a pipeline target is checked step by step: 201, errors inside body.target.pipeline, 404 for others’ objects', async () => {
      const op = await h.user('operator');
      const inv = await createInventory(op.token);
      const pipeline = { inventory_id: inv, steps: [{ name: 'one', playbook: PLAYBOOK }, { playbook: PLAYBOOK }] };
      const s = await create(op.token, { target: { pipeline } });
      expect(s.target).toEqual({ pipeline });
      expect(await refsOf(inv)).toEqual([s.id]);
      expectProblem(
        await post(op.token, { name: unique('s'), cron: '* * * * *', target: { pipeline: { steps: [] } } }),
        400,
        'body.target.pipeline.steps',
      );
      expectProblem(
        await post(op.token, {
          name: unique('s'),
          cron: '* * * * *',
          target: { pipeline: { inventory: INI, steps: [{ playbook: PLAYBOOK }, { playbook: PLAYBOOK, shards: 5 }] } },
        }),
        400,
        'body.target.pipeline.steps.1.shards',
      );
      const other = await h.user('operator');
      expectProblem(await post(other.token, { name: unique('s'), cron: '* * * * *', target: { pipeline } }), 404);
    });

    it('a template target: answers checked at their fields, password answers sealed and shown as $encrypted$', async () => {
      const op = await h.user('operator');
      const tpl = await createTemplate(op.token, {
        kind: 'run',
        spec: { playbook: PLAYBOOK, inventory: INI },
        survey: SURVEY,
        allow_overrides: ['limit'],
      });
      const target = {
        template_id: tpl,
        survey_answers: { db_password: 'hunter2', region: 'eu' },
        overrides: { limit: 'web1' },
      };
      const res = await post(op.token, { name: unique('s'), cron: '0 1 * * *', target });
      expect(res.status).toBe(201);
      expect(res.body.target).toEqual({ ...target, survey_answers: { db_password: '$encrypted$', region: 'eu' } });
      expect(res.text).not.toContain('hunter2');
      const stored = await repos().schedules.findById(res.body.id as string);
      expect(stored).toMatchObject({ template_id: tpl, target_secrets_enc: expect.any(String) });
      expect(JSON.stringify(stored)).not.toContain('hunter2');
      expect(JSON.parse(h.keyring.decrypt(stored!.target_secrets_enc!).toString('utf8'))).toEqual({
        db_password: 'hunter2',
      });
      expect(await refsOf(tpl)).toEqual([res.body.id]);
      const audit = await repos().audit.list({ object: res.body.id as string }, { limit: 5 });
      expect(JSON.stringify(audit)).not.toContain('hunter2');
      expect((await h.http.get(`/v1/schedules/${res.body.id as string}`).set(bearer(op.token))).text).not.toContain(
        'hunter2',
      );

      const bad = await post(op.token, {
        name: unique('s'),
        cron: '0 1 * * *',
        target: { template_id: tpl, survey_answers: { region: 'mars' }, overrides: { check: true } },
      });
      expectProblem(bad, 400, 'body.target.survey_answers.region');
      expectProblem(bad, 400, 'body.target.survey_answers.db_password');
      expectProblem(bad, 400, 'body.target.overrides.check');

      // The template it launches cannot be deleted while the schedule uses it.
      const del = await h.http.delete(`/v1/templates/${tpl}`).set(bearer(op.token));
      expectProblem(del, 409);
      expect(del.body.detail).toContain(res.body.id);
      // A PUT that keeps the target keeps the sealed answers; a new target replaces them.
      const renamed = await h.http
        .put(`/v1/schedules/${res.body.id as string}`)
        .set(bearer(op.token))
        .send({ name: unique('renamed') });
      expect(renamed.body.target).toEqual(res.body.target);
      expect((await repos().schedules.findById(res.body.id as string))?.target_secrets_enc).toBe(
        stored!.target_secrets_enc,
      );
      // The target sent back as shown (the password as $encrypted$) keeps the stored password, not the placeholder.
      const resent = await h.http
        .put(`/v1/schedules/${res.body.id as string}`)
        .set(bearer(op.token))
        .send({ target: { ...res.body.target, survey_answers: { db_password: '$encrypted$', region: 'us' } } });
      expect(resent.status).toBe(200);
      expect(resent.body.target.survey_answers).toEqual({ db_password: '$encrypted$', region: 'us' });
      const resealed = (await repos().schedules.findById(res.body.id as string))!.target_secrets_enc!;
      expect(JSON.parse(h.keyring.decrypt(resealed).toString('utf8'))).toEqual({ db_password: 'hunter2' });
      const retargeted = await h.http
        .put(`/v1/schedules/${res.body.id as string}`)
        .set(bearer(op.token))
        .send({ target: inlineTarget });
      expect(retargeted.status).toBe(200);
      expect(await repos().schedules.findById(res.body.id as string)).toMatchObject({
        template_id: null,
        target_secrets_enc: null,
      });
      expect(await refsOf(tpl)).toEqual([]);
      expect((await h.http.delete(`/v1/templates/${tpl}`).set(bearer(op.token))).status).toBe(204);
    });

    it('404 for an unknown template or one the caller cannot see', async () => {
      const owner = await h.user('operator');
      const other = await h.user('operator');
      const tpl = await createTemplate(owner.token, { kind: 'run', spec: { playbook: PLAYBOOK, inventory: INI } });
      for (const template_id of [UNKNOWN.tpl, tpl])
        expectProblem(await post(other.token, { name: unique('s'), cron: '* * * * *', target: { template_id } }), 404);
      await grant(other.id, tpl, 'use');
      expect(
        (await post(other.token, { name: unique('s'), cron: '* * * * *', target: { template_id: tpl } })).status,
      ).toBe(201);
    });
  });

  describe('preview', () => {
    it('answers the next five due times from now in the zone, UTC and local, for any signed-in role', async () => {
      const viewer = await h.user('viewer');
      const before = Date.now();
      const res = await h.http
        .post('/v1/schedules/preview')
        .set(bearer(viewer.token))
        .send({ cron: ' 30 2 * * 1-5 ', timezone: 'Europe/Berlin' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ cron: '30 2 * * 1-5', timezone: 'Europe/Berlin' });
      const utc = res.body.next_runs as string[];
      const local = res.body.next_runs_local as string[];
      expect(utc).toHaveLength(5);
      expect(local).toHaveLength(5);
      for (const [i, at] of utc.entries()) {
        expect(Date.parse(at)).toBeGreaterThan(before);
        if (i > 0) expect(Date.parse(at)).toBeGreaterThan(Date.parse(utc[i - 1]!));
        // The same instant, written in Berlin time: 02:30 on a weekday, at +01:00 or +02:00.
        expect(local[i]).toMatch(/T02:30:00\+0[12]:00$/);
        expect(Date.parse(local[i]!)).toBe(Date.parse(at));
        expect([1, 2, 3, 4, 5]).toContain(new Date(`${local[i]!.slice(0, 10)}T12:00:00Z`).getUTCDay());
      }
      // The zone defaults to UTC.
      const utcOnly = await h.http.post('/v1/schedules/preview').set(bearer(viewer.token)).send({ cron: '0 * * * *' });
      expect(utcOnly.body.timezone).toBe('UTC');
      expect((utcOnly.body.next_runs_local as string[])[0]).toMatch(/T\d{2}:00:00\+00:00$/);
    });

    it('refuses a bad expression or zone at its field, and callers without a token', async () => {
      const op = await h.user('operator');
      expectProblem(
        await h.http.post('/v1/schedules/preview').set(bearer(op.token)).send({ cron: '61 * * * *' }),
        400,
        'body.cron',
      );
      expectProblem(
        await h.http
          .post('/v1/schedules/preview')
          .set(bearer(op.token))
          .send({ cron: '0 * * * *', timezone: 'Mars/Olympus' }),
        400,
        'body.timezone',
      );
      expectProblem(await h.http.post('/v1/schedules/preview').set(bearer(op.token)).send({}), 400, 'body.cron');
      expect((await h.http.post('/v1/schedules/preview').send({ cron: '0 * * * *' })).status).toBe(401);
    });
  });

  describe('list and get', () => {
    it('lists what the caller may see, newest first, paged with Link; admins see all', async () => {
      const a = await h.user('operator');
      const b = await h.user('operator');
      const mine = [await create(a.token), await create(a.token), await create(a.token)];
      const theirs = await create(b.token);
      const first = await h.http.get('/v1/schedules?limit=2').set(bearer(a.token));
      expect(first.status).toBe(200);
      expect(first.body.map((s: { id: string }) => s.id)).toEqual([mine[2]!.id, mine[1]!.id]);
      const link = /<([^>]+)>; rel="next"/.exec(first.headers.link as string)?.[1];
      expect(link).toBeDefined();
      const second = await h.http.get(link!).set(bearer(a.token));
      expect(second.body.map((s: { id: string }) => s.id)).toEqual([mine[0]!.id]);
      const all = await h.http.get('/v1/schedules?limit=500').set(bearer(h.admin.token));
      expect(all.body.map((s: { id: string }) => s.id)).toEqual(expect.arrayContaining([theirs.id, mine[0]!.id]));
      expectProblem(await h.http.get(`/v1/schedules/${theirs.id}`).set(bearer(a.token)), 404);
      expectProblem(await h.http.get(`/v1/schedules/${UNKNOWN.sch}`).set(bearer(a.token)), 404);
      expectProblem(await h.http.get('/v1/schedules/prj_01ARZ3NDEKTSV4RRFFQ69G5FAV').set(bearer(a.token)), 400);
      expectProblem(await h.http.get('/v1/schedules?limit=0').set(bearer(a.token)), 400);
      expectProblem(await h.http.get('/v1/schedules?cursor=zzz').set(bearer(a.token)), 400);
      expectProblem(await h.http.get('/v1/schedules'), 401);
    });

    it('is served without /v1 too, marked deprecated', async () => {
      const op = await h.user('operator');
      const s = await create(op.token);
      const res = await h.http.get(`/schedules/${s.id}`).set(bearer(op.token));
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(s.id);
      expect(res.headers.deprecation).toBeDefined();
    });
  });

  describe('update', () => {
    it('changes only what is given; a new cron or zone recomputes next_run_at, disabling clears it', async () => {
      const op = await h.user('operator');
      const s = await create(op.token, { cron: '0 3 * * *' });
      const put = (body: unknown) =>
        h.http
          .put(`/v1/schedules/${s.id}`)
          .set(bearer(op.token))
          .send(body as object);

      const renamed = await put({ name: unique('renamed') });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toMatchObject({ cron: '0 3 * * *', next_run_at: s.next_run_at, target: inlineTarget });

      const retimed = await put({ cron: '15 4 * * *', timezone: 'America/New_York' });
      expect(retimed.body.next_run_at_local).toMatch(/T04:15:00-0[45]:00$/);
      expect(retimed.body.name).toBe(renamed.body.name);

      const off = await put({ enabled: false });
      expect(off.body).toMatchObject({ enabled: false, next_run_at: null, next_run_at_local: null });
      const on = await put({ enabled: true });
      expect(on.body).toMatchObject({ enabled: true, next_run_at: retimed.body.next_run_at });

      const inv = await createInventory(op.token);
      const aimed = await put({ target: { run: { playbook: PLAYBOOK, inventory_id: inv, limit: 'web1' } } });
      expect(aimed.status).toBe(200);
      expect(aimed.body.target).toEqual({ run: { playbook: PLAYBOOK, inventory_id: inv, limit: 'web1' } });
      expect(await refsOf(inv)).toEqual([s.id]);
      await put({ target: inlineTarget });
      expect(await refsOf(inv)).toEqual([]);

      const audit = await repos().audit.list({ object: s.id, action: 'schedule.update' }, { limit: 10 });
      expect(audit).toHaveLength(6);
      expect(audit.at(-1)!.summary).toContain('changed name');
      expect((await h.http.get(`/v1/schedules/${s.id}`).set(bearer(op.token))).body).toMatchObject({
        cron: '15 4 * * *',
        timezone: 'America/New_York',
        enabled: true,
        target: inlineTarget,
      });
    });

    it('400 for an empty body and bad fields, 404 for unknown or invisible, 403 with use only', async () => {
      const op = await h.user('operator');
      const s = await create(op.token);
      const put = (token: string, id: string, body: unknown) =>
        h.http
          .put(`/v1/schedules/${id}`)
          .set(bearer(token))
          .send(body as object);
      expectProblem(await put(op.token, s.id, {}), 400);
      expectProblem(await put(op.token, s.id, { cron: '61 * * * *' }), 400, 'body.cron');
      expectProblem(await put(op.token, s.id, { timezone: 'Nowhere/Town' }), 400, 'body.timezone');
      expectProblem(await put(op.token, s.id, { enabled: null }), 400, 'body.enabled');
      expectProblem(
        await put(op.token, s.id, { target: { run: { playbook: PLAYBOOK } } }),
        400,
        'body.target.run.inventory_id',
      );
      expectProblem(
        await put(op.token, s.id, { target: { run: { playbook: PLAYBOOK, inventory_id: UNKNOWN.inv } } }),
        404,
      );
      expectProblem(await put(op.token, UNKNOWN.sch, { name: 'x' }), 404);

      const user = await h.user('operator');
      expectProblem(await put(user.token, s.id, { name: unique('x') }), 404);
      await grant(user.id, s.id, 'use');
      expect((await h.http.get(`/v1/schedules/${s.id}`).set(bearer(user.token))).status).toBe(200);
      expectProblem(await put(user.token, s.id, { name: unique('x') }), 403);
      expectProblem(await h.http.delete(`/v1/schedules/${s.id}`).set(bearer(user.token)), 403);
      // A manager who may not use the new target's inventory cannot aim the schedule at it.
      const manager = await h.user('operator');
      await grant(manager.id, s.id, 'manage');
      const inv = await createInventory(op.token);
      const aim = { target: { run: { playbook: PLAYBOOK, inventory_id: inv } } };
      expectProblem(await put(manager.token, s.id, aim), 404);
      expect((await put(manager.token, s.id, { name: unique('managed') })).status).toBe(200);
      // Nothing changed by the refusals.
      expect((await h.http.get(`/v1/schedules/${s.id}`).set(bearer(op.token))).body.target).toEqual(inlineTarget);
    });
  });

  describe('delete', () => {
    it('204, then 404; its grants and launch references go with it; audited', async () => {
      const op = await h.user('operator');
      const inv = await createInventory(op.token);
      const s = await create(op.token, { target: { run: { playbook: PLAYBOOK, inventory_id: inv } } });
      const other = await h.user('operator');
      await grant(other.id, s.id, 'use');
      expect(await refsOf(inv)).toEqual([s.id]);
      const del = await h.http.delete(`/v1/schedules/${s.id}`).set(bearer(op.token));
      expect(del.status).toBe(204);
      expectProblem(await h.http.get(`/v1/schedules/${s.id}`).set(bearer(op.token)), 404);
      expectProblem(await h.http.delete(`/v1/schedules/${s.id}`).set(bearer(op.token)), 404);
      expect(await refsOf(inv)).toEqual([]);
      expect(await repos().grants.list({ object_id: s.id }, { limit: 10 })).toEqual([]);
      const audit = await repos().audit.list({ object: s.id, action: 'schedule.delete' }, { limit: 5 });
      expect(audit).toHaveLength(1);
      // The inventory it referenced can go now.
      expect((await h.http.delete(`/v1/inventories/${inv}`).set(bearer(op.token))).status).toBe(204);
    });
  });
});
