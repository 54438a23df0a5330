import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { newId } from '@baton/core';
import { DIALECTS } from '@baton/db/testing';
import { createRepo, tempDir } from '@baton/executor/testing';
import fs from 'node:fs';
import type { Response } from 'supertest';
import { bearer, createHarness, expectProblem, type Harness } from '../testing/harness.js';

const UNKNOWN = {
  tpl: 'tpl_01ARZ3NDEKTSV4RRFFQ69G5FAV',
  inv: 'inv_01ARZ3NDEKTSV4RRFFQ69G5FAV',
  prj: 'prj_01ARZ3NDEKTSV4RRFFQ69G5FAV',
};
const PLAYBOOK = '- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.ping:\n';
const INI = '[web]\nweb1\nweb2\n\n[db]\ndb1\n';
const PASSWORD_DEFAULT = 'pw-default-Zq8!vK2#not-shown';
const PASSWORD_ANSWER = 'pw-answer-Xw4$Rt9%sealed';
/** One question of every type. */
const SURVEY = [
  { variable: 'app_name', question: 'Which app?', type: 'text', required: true, min: 2, max: 20 },
  { variable: 'notes', question: 'Notes?', type: 'textarea', required: false, default: 'none' },
  { variable: 'db_password', question: 'Database password?', type: 'password', required: true, min: 8 },
  { variable: 'api_token', question: 'API token?', type: 'password', required: false, default: PASSWORD_DEFAULT },
  { variable: 'replicas', question: 'How many?', type: 'integer', required: false, min: 1, max: 5, default: 2 },
  { variable: 'ratio', question: 'Canary ratio?', type: 'float', required: false, min: 0, max: 1 },
  { variable: 'dry_run', question: 'Dry run?', type: 'boolean', required: true },
  { variable: 'env', question: 'Where?', type: 'choice', required: true, choices: ['staging', 'prod'] },
  { variable: 'features', question: 'Which features?', type: 'multichoice', required: false, choices: ['a', 'b'] },
];
const GOOD_ANSWERS = {
  app_name: 'shop',
  db_password: PASSWORD_ANSWER,
  replicas: 3,
  ratio: 0.5,
  dry_run: true,
  env: 'prod',
  features: ['b'],
};
let seq = 0;
const unique = (stem: string) => `${stem} ${++seq} ${Date.now().toString(36)}`;
const ids = (res: Response) => (res.body as Array<{ id: string }>).map((x) => x.id);

describe.each(DIALECTS)('templates on %s', (dialect) => {
  let h: Harness;
  const root = tempDir(`baton-templates-${dialect}`);
  const repo = createRepo(root);

  beforeAll(async () => {
    h = await createHarness(dialect);
  });
  afterAll(async () => {
    await h.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const post = (token: string, path: string, body: unknown) =>
    h.http
      .post(path)
      .set(bearer(token))
      .send(body as object);
  const created = async (token: string, path: string, body: unknown) => {
    const res = await post(token, path, body);
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${res.text}`);
    return res.body.id as string;
  };
  const inventory = (token: string, content = INI) =>
    created(token, '/v1/inventories', { name: unique('inv'), content });
  const project = (token: string) => created(token, '/v1/projects', { name: unique('prj'), git_url: repo.url });
  const grant = async (token: string, subject: string, object: string, level: 'use' | 'manage') => {
    expect((await post(token, '/v1/grants', { subject, object, level })).status).toBe(201);
  };
  const createTemplate = (token: string, body: Record<string, unknown>) =>
    post(token, '/v1/templates', { name: unique('tpl'), ...body });
  const runTemplate = async (
    token: string,
    extra: Record<string, unknown> = {},
    spec: Record<string, unknown> = {},
  ) => {
    const inv = await inventory(token);
    const res = await createTemplate(token, {
      kind: 'run',
      spec: { playbook: PLAYBOOK, inventory_id: inv, ...spec },
      ...extra,
    });
    if (res.status !== 201) throw new Error(`template: ${res.status} ${res.text}`);
    return { id: res.body.id as string, inv, res };
  };
  const launch = (token: string, id: string, body?: unknown) => {
    const req = h.http.post(`/v1/templates/${id}/launch`).set(bearer(token));
    return body === undefined ? req : req.send(body as object);
  };
  const runRow = async (id: string) => (await h.tdb.db.repos.runs.findById(id))!;
  const auditText = async () => (await h.http.get('/v1/audit?limit=500').set(bearer(h.admin.token))).text;

  describe('create, read, list', () => {
    it('saves a run template: 201, Location, a manage grant for the creator, launch refs, audited', async () => {
      const op = await h.user('operator');
      const t = await runTemplate(op.token, {
        description: 'deploys the shop',
        allow_overrides: ['limit', 'extra_vars'],
      });
      expect(t.id).toMatch(/^tpl_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(t.res.headers.location).toBe(`/v1/templates/${t.id}`);
      expect(t.res.body).toEqual({
        id: t.id,
        name: expect.any(String),
        description: 'deploys the shop',
        kind: 'run',
        spec: { playbook: PLAYBOOK, inventory_id: t.inv },
        survey: null,
        allow_overrides: ['limit', 'extra_vars'],
        created_by: op.id,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      const grants = await h.http.get(`/v1/grants?object=${t.id}`).set(bearer(op.token));
      expect(grants.body).toEqual([expect.objectContaining({ subject: op.id, object: t.id, level: 'manage' })]);
      const fetched = await h.http.get(t.res.headers.location as string).set(bearer(op.token));
      expect(fetched.status).toBe(200);
      expect(fetched.body).toEqual(t.res.body);
      expect((await h.tdb.db.repos.launchRefs.ownersOf(t.inv)).map((o) => o.id)).toEqual([t.id]);
      const audit = await h.tdb.db.repos.audit.list({ object: t.id }, { limit: 10 });
      expect(audit.map((e) => e.action)).toEqual(['template.create']);
    });

    it('saves a project template and checks the playbook exists at the branch head (422 at body.spec.playbook)', async () => {
      const op = await h.user('operator');
      const prj = await project(op.token);
      const inv = await inventory(op.token);
      const ok = await createTemplate(op.token, {
        kind: 'run',
        spec: { playbook: 'site.yml', project_id: prj, inventory_id: inv },
      });
      expect(ok.status).toBe(201);
      expect((await h.tdb.db.repos.launchRefs.ownersOf(prj)).map((o) => o.id)).toEqual([ok.body.id]);
      const missing = await createTemplate(op.token, {
        kind: 'run',
        spec: { playbook: 'nope.yml', project_id: prj, inventory_id: inv },
      });
      expectProblem(missing, 422, 'body.spec.playbook');
      const badRef = await createTemplate(op.token, {
        kind: 'run',
        spec: { playbook: 'site.yml', project_id: prj, inventory_id: inv, ref: 'no-such-branch' },
      });
      expectProblem(badRef, 422, 'body.spec.ref');
    });

    it('lists the templates the caller may see, newest first, pages with Link, and serves the legacy edition', async () => {
      const op = await h.user('operator');
      const other = await h.user('operator');
      const a = await runTemplate(op.token);
      const b = await runTemplate(op.token);
      const theirs = await runTemplate(other.token);
      const mine = await h.http.get('/v1/templates').set(bearer(op.token));
      expect(mine.status).toBe(200);
      expect(ids(mine)).toEqual([b.id, a.id]);
      const page = await h.http.get('/v1/templates?limit=1').set(bearer(op.token));
      expect(ids(page)).toEqual([b.id]);
      const next = /<([^>]+)>; rel="next"/.exec(String(page.headers.link))![1]!;
      expect(ids(await h.http.get(next).set(bearer(op.token)))).toEqual([a.id]);
      const all = await h.http.get('/v1/templates?limit=500').set(bearer(h.admin.token));
      expect(ids(all)).toEqual(expect.arrayContaining([a.id, b.id, theirs.id]));
      expectProblem(await h.http.get(`/v1/templates/${theirs.id}`).set(bearer(op.token)), 404);
      expectProblem(await h.http.get(`/v1/templates/${UNKNOWN.tpl}`).set(bearer(op.token)), 404);
      expectProblem(await h.http.get('/v1/templates?cursor=%%%').set(bearer(op.token)), 400, 'query.cursor');
      const legacy = await h.http.get('/templates').set(bearer(op.token));
      expect(legacy.status).toBe(200);
      expect(legacy.headers.deprecation).toBeDefined();
      expect(ids(legacy)).toEqual([b.id, a.id]);
    });

    it.each<[string, Record<string, unknown>, string]>([
      ['no kind', { kind: undefined }, 'body.kind'],
      ['an unknown kind', { kind: 'job' }, 'body.kind'],
      ['no name', { name: undefined }, 'body.name'],
      ['a blank name', { name: '   ' }, 'body.name'],
      ['no spec', { spec: undefined }, 'body.spec'],
      ['a spec without playbook', { spec: { inventory: INI } }, 'body.spec.playbook'],
      [
        'a spec with a bad inventory_id',
        { spec: { playbook: PLAYBOOK, inventory_id: 'inv_x' } },
        'body.spec.inventory_id',
      ],
      ['a pipeline spec under kind run', { spec: { steps: [{ playbook: PLAYBOOK }] } }, 'body.spec'],
      [
        'a run spec under kind pipeline',
        { kind: 'pipeline', spec: { playbook: PLAYBOOK, inventory: INI } },
        'body.spec',
      ],
      [
        'a spec with both inventories',
        { spec: { playbook: PLAYBOOK, inventory: INI, inventory_id: UNKNOWN.inv } },
        'body.spec.inventory_id',
      ],
      [
        'an inline inventory ansible cannot read',
        { spec: { playbook: PLAYBOOK, inventory: '[web\nx\n' } },
        'body.spec.inventory',
      ],
      ['more shards than hosts', { spec: { playbook: PLAYBOOK, inventory: INI, shards: 9 } }, 'body.spec.shards'],
      ['an unknown override field', { allow_overrides: ['playbook'] }, 'body.allow_overrides.0'],
      ['a repeated override field', { allow_overrides: ['limit', 'limit'] }, 'body.allow_overrides'],
      ['a survey that is not a list', { survey: { a: 1 } }, 'body.survey'],
      [
        'a survey variable that is a keyword',
        { survey: [{ ...SURVEY[0], variable: 'import' }] },
        'body.survey.0.variable',
      ],
      ['a survey variable with a dash', { survey: [{ ...SURVEY[0], variable: 'app-name' }] }, 'body.survey.0.variable'],
      ['a survey variable asked twice', { survey: [SURVEY[0], SURVEY[0]] }, 'body.survey.1.variable'],
      ['a survey question of an unknown type', { survey: [{ ...SURVEY[0], type: 'date' }] }, 'body.survey.0.type'],
      [
        'a survey choice question without choices',
        { survey: [{ ...SURVEY[7], choices: undefined }] },
        'body.survey.0.choices',
      ],
      ['a survey default of the wrong type', { survey: [{ ...SURVEY[4], default: 'two' }] }, 'body.survey.0.default'],
      [
        'a survey min above max',
        { survey: [{ ...SURVEY[4], min: 5, max: 1, default: undefined }] },
        'body.survey.0.max',
      ],
      [
        'a survey question without required',
        { survey: [{ ...SURVEY[0], required: undefined }] },
        'body.survey.0.required',
      ],
      [
        'a survey of 101 questions',
        { survey: Array.from({ length: 101 }, (_, i) => ({ ...SURVEY[0], variable: `v${i}` })) },
        'body.survey',
      ],
      ['an unknown field', { color: 'red' }, 'body'],
    ])('refuses %s: 400', async (_what, override, path) => {
      const body: Record<string, unknown> = {
        name: unique('tpl'),
        kind: 'run',
        spec: { playbook: PLAYBOOK, inventory: INI },
        ...override,
      };
      for (const [k, v] of Object.entries(override)) if (v === undefined) delete body[k];
      expectProblem(await post(h.admin.token, '/v1/templates', body), 400, path);
    });

    it('refuses a password default of "$encrypted$" when nothing is stored: 400 at body.survey.0.default', async () => {
      const res = await createTemplate(h.admin.token, {
        kind: 'run',
        spec: { playbook: PLAYBOOK, inventory: INI },
        survey: [{ ...SURVEY[3], default: '$encrypted$' }],
      });
      expectProblem(res, 400, 'body.survey.0.default');
    });

    it('checks the spec as the creator would submit it: 404 for invisible objects, 403 for a viewer, 409 for a taken name', async () => {
      const op = await h.user('operator');
      const other = await h.user('operator');
      const theirs = await inventory(other.token);
      expectProblem(
        await createTemplate(op.token, { kind: 'run', spec: { playbook: PLAYBOOK, inventory_id: UNKNOWN.inv } }),
        404,
      );
      expectProblem(
        await createTemplate(op.token, { kind: 'run', spec: { playbook: PLAYBOOK, inventory_id: theirs } }),
        404,
      );
      expectProblem(
        await createTemplate(op.token, {
          kind: 'run',
          spec: { playbook: 'site.yml', project_id: UNKNOWN.prj, inventory: INI },
        }),
        404,
      );
      const viewer = await h.user('viewer');
      expectProblem(
        await createTemplate(viewer.token, { kind: 'run', spec: { playbook: PLAYBOOK, inventory: INI } }),
        403,
      );
      const t = await runTemplate(op.token);
      const again = await post(op.token, '/v1/templates', {
        name: t.res.body.name,
        kind: 'run',
        spec: { playbook: PLAYBOOK, inventory: INI },
      });
      expectProblem(again, 409);
      expect(again.body.detail).toContain('already exists');
    });

    it('stores nothing and runs nothing when it validates a spec', async () => {
      const before = await h.http.get('/v1/runs?limit=500').set(bearer(h.admin.token));
      await runTemplate(h.admin.token);
      const after = await h.http.get('/v1/runs?limit=500').set(bearer(h.admin.token));
      expect(ids(after)).toEqual(ids(before));
    });
  });

  describe('surveys and secrets', () => {
    it('never returns a password default nor puts it in the audit trail; shows that one exists as "$encrypted$"', async () => {
      const op = await h.user('operator');
      const t = await runTemplate(op.token, { survey: SURVEY });
      const shown = t.res.body.survey as Array<Record<string, unknown>>;
      expect(shown.find((q) => q.variable === 'api_token')).toEqual({ ...SURVEY[3], default: '$encrypted$' });
      expect(shown.find((q) => q.variable === 'db_password')).toEqual(SURVEY[2]);
      expect(shown.find((q) => q.variable === 'replicas')).toEqual(SURVEY[4]);
      const row = await h.tdb.db.repos.templates.findById(t.id);
      expect(row!.secret_defaults_enc).toMatch(/^v1\./);
      expect(JSON.stringify(row)).not.toContain(PASSWORD_DEFAULT);
      expect(h.keyring.decrypt(row!.secret_defaults_enc!).toString('utf8')).toBe(
        JSON.stringify({ api_token: PASSWORD_DEFAULT }),
      );
      const responses = [
        t.res,
        await h.http.get(`/v1/templates/${t.id}`).set(bearer(op.token)),
        await h.http.get('/v1/templates').set(bearer(op.token)),
        await h.http
          .put(`/v1/templates/${t.id}`)
          .set(bearer(op.token))
          .send({ name: unique('renamed') }),
      ];
      for (const res of responses) expect(res.text).not.toContain(PASSWORD_DEFAULT);
      expect(await auditText()).not.toContain(PASSWORD_DEFAULT);
    });

    it('launches with good answers of every type: answers become extra vars (over the template’s), passwords sealed', async () => {
      const op = await h.user('operator');
      const t = await runTemplate(op.token, { survey: SURVEY }, { extra_vars: { env: 'dev', keep: 'me' } });
      const res = await launch(op.token, t.id, { survey_answers: GOOD_ANSWERS });
      expect(res.status).toBe(201);
      expect(res.headers.location).toBe(`/v1/runs/${res.body.id}`);
      const publicAnswers = {
        app_name: 'shop',
        notes: 'none',
        replicas: 3,
        ratio: 0.5,
        dry_run: true,
        env: 'prod',
        features: ['b'],
      };
      expect(res.body).toMatchObject({
        kind: 'run',
        status: 'pending',
        origin: 'template',
        template_id: t.id,
        schedule_id: null,
        trigger_id: null,
        inventory_id: t.inv,
        submitted_by: op.id,
        survey_answers: publicAnswers,
        extra_vars: { keep: 'me', ...publicAnswers, db_password: '$encrypted$', api_token: '$encrypted$' },
      });
      const row = await runRow(res.body.id as string);
      expect(JSON.parse(h.keyring.decrypt(row.secret_vars_enc!).toString('utf8'))).toEqual({
        db_password: PASSWORD_ANSWER,
        api_token: PASSWORD_DEFAULT,
      });
      // The bundle an executor gets has the values in clear, and lists them for masking.
      const bundle = await h.services.runBundles.build(res.body.id as string);
      expect(bundle.extra_vars).toMatchObject({
        db_password: PASSWORD_ANSWER,
        api_token: PASSWORD_DEFAULT,
        env: 'prod',
      });
      expect(new Set(bundle.secret_values)).toEqual(new Set([PASSWORD_ANSWER, PASSWORD_DEFAULT]));
      const got = await h.http.get(`/v1/runs/${res.body.id}`).set(bearer(op.token));
      for (const r of [res, got]) {
        expect(r.text).not.toContain(PASSWORD_ANSWER);
        expect(r.text).not.toContain(PASSWORD_DEFAULT);
      }
      expect(await auditText()).not.toContain(PASSWORD_ANSWER);
    });

    it('refuses every kind of bad answer, one error each at body.survey_answers.<variable>, and runs nothing', async () => {
      const op = await h.user('operator');
      const t = await runTemplate(op.token, { survey: SURVEY });
      const bad = {
        app_name: 'x', // too short
        notes: 42, // not a string
        db_password: 'short', // too short
        replicas: 9, // over max
        ratio: 'half', // not a number
        dry_run: 'yes', // not a boolean
        env: 'qa', // not a choice
        features: ['a', 'z'], // z is not a choice
        unknown_var: 1, // no such question
      };
      const res = await launch(op.token, t.id, { survey_answers: bad });
      expectProblem(res, 400);
      const errors = res.body.errors as Array<{ path: string; message: string }>;
      expect(errors.map((e) => e.path).sort()).toEqual(
        Object.keys(bad)
          .map((k) => `body.survey_answers.${k}`)
          .sort(),
      );
      expect(res.text).not.toContain('short"');
      const missing = await launch(op.token, t.id, { survey_answers: { app_name: 'shop' } });
      expectProblem(missing, 400);
      expect((missing.body.errors as Array<{ path: string }>).map((e) => e.path).sort()).toEqual([
        'body.survey_answers.db_password',
        'body.survey_answers.dry_run',
        'body.survey_answers.env',
      ]);
      expectProblem(await launch(op.token, t.id), 400, 'body.survey_answers.app_name');
      expectProblem(
        await launch(op.token, t.id, { survey_answers: { ...GOOD_ANSWERS, replicas: 2.5 } }),
        400,
        'body.survey_answers.replicas',
      );
      expectProblem(await launch(op.token, t.id, { survey_answers: 'yes' }), 400, 'body.survey_answers');
      const runs = await h.http.get(`/v1/runs?template=${t.id}`).set(bearer(op.token));
      expect(runs.body).toEqual([]);
    });

    it('launches a template without a survey with no body at all, and refuses answers to it', async () => {
      const op = await h.user('operator');
      const t = await runTemplate(op.token);
      const res = await launch(op.token, t.id);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ template_id: t.id, survey_answers: null, extra_vars: null });
      expectProblem(await launch(op.token, t.id, { survey_answers: { x: 1 } }), 400, 'body.survey_answers.x');
      expectProblem(await launch(op.token, t.id, { nope: 1 }), 400, 'body');
    });
  });

  describe('overrides', () => {
    it('applies allowed overrides and refuses the others at body.overrides.<field>', async () => {
      const op = await h.user('operator');
      const other = await inventory(op.token, '[app]\napp1\napp2\n');
      const t = await runTemplate(
        op.token,
        { allow_overrides: ['limit', 'extra_vars', 'inventory_id', 'check', 'verbosity', 'labels'] },
        { extra_vars: { a: 1, b: 2 }, limit: 'web' },
      );
      const res = await launch(op.token, t.id, {
        overrides: {
          limit: 'app1',
          extra_vars: { b: 3 },
          inventory_id: other,
          check: true,
          verbosity: 2,
          labels: ['x'],
        },
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        limit: 'app1',
        extra_vars: { a: 1, b: 3 },
        inventory_id: other,
        check: true,
        verbosity: 2,
        labels: ['x'],
      });
      const refused = await launch(op.token, t.id, {
        overrides: { credential_ids: [], shards: 2, ref: 'main', limit: 'x' },
      });
      expectProblem(refused, 400);
      expect((refused.body.errors as Array<{ path: string }>).map((e) => e.path).sort()).toEqual([
        'body.overrides.credential_ids',
        'body.overrides.ref',
        'body.overrides.shards',
      ]);
      const none = await runTemplate(op.token);
      expectProblem(await launch(op.token, none.id, { overrides: { limit: 'web' } }), 400, 'body.overrides.limit');
      expectProblem(await launch(op.token, t.id, { overrides: { playbook: 'x' } }), 400, 'body.overrides');
      expectProblem(await launch(op.token, t.id, { overrides: { verbosity: 9 } }), 400, 'body.overrides.verbosity');
    });

    it('points a submission error caused by an override at the override (shards over the host count)', async () => {
      const op = await h.user('operator');
      const t = await runTemplate(op.token, { allow_overrides: ['shards'] });
      const res = await launch(op.token, t.id, { overrides: { shards: 2 } });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ kind: 'split', shard_count: 2, template_id: t.id });
      expectProblem(await launch(op.token, t.id, { overrides: { shards: 7 } }), 400, 'body.overrides.shards');
    });

    it('runs the ref given by an allowed override', async () => {
      const op = await h.user('operator');
      const prj = await project(op.token);
      const first = repo.head('main');
      const newer = repo.commit();
      const inv = await inventory(op.token);
      const res = await createTemplate(op.token, {
        kind: 'run',
        spec: { playbook: 'site.yml', project_id: prj, inventory_id: inv },
        allow_overrides: ['ref'],
      });
      expect(res.status).toBe(201);
      const atHead = await launch(op.token, res.body.id as string, {});
      expect(atHead.body).toMatchObject({ commit: newer, ref: null });
      const atFirst = await launch(op.token, res.body.id as string, { overrides: { ref: first } });
      expect(atFirst.status).toBe(201);
      expect(atFirst.body).toMatchObject({ commit: first, ref: first });
      expectProblem(
        await launch(op.token, res.body.id as string, { overrides: { ref: 'nope' } }),
        422,
        'body.overrides.ref',
      );
    });
  });

  describe('launch authority', () => {
    it('launches with the owner’s authority: use on the template is enough; without it 404; a viewer 403', async () => {
      const owner = await h.user('operator');
      const launcher = await h.user('operator');
      const t = await runTemplate(owner.token);
      // The launcher holds no grant on the template's inventory.
      expectProblem(await h.http.get(`/v1/inventories/${t.inv}`).set(bearer(launcher.token)), 404);
      expectProblem(await launch(launcher.token, t.id, {}), 404);
      await grant(owner.token, launcher.id, t.id, 'use');
      const res = await launch(launcher.token, t.id, {});
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ submitted_by: launcher.id, template_id: t.id, inventory_id: t.inv });
      // The run is visible to its submitter, and listed under its template.
      const listed = await h.http.get(`/v1/runs?template=${t.id}`).set(bearer(launcher.token));
      expect(ids(listed)).toEqual([res.body.id]);
      // use is not manage
      expectProblem(
        await h.http
          .put(`/v1/templates/${t.id}`)
          .set(bearer(launcher.token))
          .send({ name: unique('x') }),
        403,
      );
      expectProblem(await h.http.delete(`/v1/templates/${t.id}`).set(bearer(launcher.token)), 403);
      const viewer = await h.user('viewer');
      await grant(owner.token, viewer.id, t.id, 'use');
      expectProblem(await launch(viewer.token, t.id, {}), 403);
    });

    it('fails with the owner’s authority once the owner lost use on an object (404), and 409 once the owner is gone', async () => {
      const admin = h.admin.token;
      const owner = await h.user('operator');
      const launcher = await h.user('operator');
      const inv = await inventory(admin);
      await grant(admin, owner.id, inv, 'use');
      const res = await createTemplate(owner.token, { kind: 'run', spec: { playbook: PLAYBOOK, inventory_id: inv } });
      expect(res.status).toBe(201);
      const id = res.body.id as string;
      await grant(owner.token, launcher.id, id, 'use');
      expect((await launch(launcher.token, id, {})).status).toBe(201);
      const grants = await h.http.get(`/v1/grants?object=${inv}`).set(bearer(admin));
      const ownerGrant = (grants.body as Array<{ id: string; subject: string }>).find((g) => g.subject === owner.id)!;
      expect((await h.http.delete(`/v1/grants/${ownerGrant.id}`).set(bearer(admin))).status).toBe(204);
      expectProblem(await launch(launcher.token, id, {}), 404);
      await grant(admin, owner.id, inv, 'use');
      expect((await launch(launcher.token, id, {})).status).toBe(201);
      expect((await h.http.delete(`/v1/users/${owner.id}`).set(bearer(admin))).status).toBe(204);
      // The launcher's grant on the template outlives the owner's account; the owner's authority does not.
      const gone = await launch(launcher.token, id, {});
      expectProblem(gone, 409);
      expect(gone.body.detail).toContain(`owner ${owner.id} no longer exists`);
    });
  });

  describe('as schedules and triggers launch it (TemplateLauncher)', () => {
    it('records their origin and id, runs the pushed ref whatever allow_overrides says, and validates without storing', async () => {
      const op = await h.user('operator');
      const principal = { id: op.id, username: op.username, role: 'operator' as const };
      const prj = await project(op.token);
      const first = repo.head('main');
      const newer = repo.commit();
      const inv = await inventory(op.token);
      const res = await createTemplate(op.token, {
        kind: 'run',
        spec: { playbook: 'site.yml', project_id: prj, inventory_id: inv },
        survey: [SURVEY[2], SURVEY[7]],
      });
      expect(res.status).toBe(201);
      const id = res.body.id as string;
      const answers = { survey_answers: { db_password: PASSWORD_ANSWER, env: 'staging' } };
      const t = h.services.templates;
      expect(await t.passwordVariables(principal, id)).toEqual(['db_password']);
      expect(await t.projectIdsOf(principal, id)).toEqual([prj]);
      const sch = newId('sch');
      const bySchedule = await t.launch(principal, id, answers, { origin: 'schedule', scheduleId: sch });
      expect(bySchedule).toMatchObject({
        origin: 'schedule',
        schedule_id: sch,
        trigger_id: null,
        template_id: id,
        commit: newer,
        survey_answers: { env: 'staging' },
      });
      const trg = newId('trg');
      const byTrigger = await t.launch(principal, id, answers, { origin: 'trigger', triggerId: trg, ref: first });
      expect(byTrigger).toMatchObject({
        origin: 'trigger',
        trigger_id: trg,
        template_id: id,
        commit: first,
        ref: first,
      });
      const listed = await h.http.get(`/v1/runs?template=${id}`).set(bearer(op.token));
      expect(ids(listed)).toEqual([byTrigger.id, bySchedule.id]);
      expect(ids(await h.http.get(`/v1/runs?trigger=${trg}`).set(bearer(op.token)))).toEqual([byTrigger.id]);
      // validateOnly (a schedule or trigger being saved): every check, nothing stored.
      const checked = await t.launch(principal, id, answers, { origin: 'schedule', validateOnly: true });
      expect(checked.template_id).toBe(id);
      expect(await runRow(checked.id)).toBeUndefined();
      await expect(t.launch(principal, id, {}, { origin: 'schedule', validateOnly: true })).rejects.toMatchObject({
        errors: expect.arrayContaining([expect.objectContaining({ path: 'body.survey_answers.db_password' })]),
      });
      const stranger = { id: 'usr_01ARZ3NDEKTSV4RRFFQ69G5FAV', username: 'nobody', role: 'operator' as const };
      await expect(t.passwordVariables(stranger, id)).rejects.toMatchObject({ name: 'NotFoundError' });
      await expect(t.projectIdsOf(stranger, id)).rejects.toMatchObject({ name: 'NotFoundError' });
    });
  });

  describe('update', () => {
    it('renames, changes the survey and overrides, keeps a password default sent back as "$encrypted$"', async () => {
      const op = await h.user('operator');
      const t = await runTemplate(op.token, { survey: SURVEY });
      const name = unique('renamed');
      const shown = t.res.body.survey as Array<Record<string, unknown>>;
      const res = await h.http
        .put(`/v1/templates/${t.id}`)
        .set(bearer(op.token))
        .send({ name, description: 'new', survey: shown.slice(2, 4), allow_overrides: ['limit'] });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: t.id, name, description: 'new', allow_overrides: ['limit'] });
      expect(res.body.survey).toEqual([SURVEY[2], { ...SURVEY[3], default: '$encrypted$' }]);
      expect((await h.http.get(`/v1/templates/${t.id}`).set(bearer(op.token))).body).toEqual(res.body);
      const run = await launch(op.token, t.id, { survey_answers: { db_password: PASSWORD_ANSWER } });
      expect(run.status).toBe(201);
      const row = await runRow(run.body.id as string);
      expect(JSON.parse(h.keyring.decrypt(row.secret_vars_enc!).toString('utf8'))).toEqual({
        db_password: PASSWORD_ANSWER,
        api_token: PASSWORD_DEFAULT,
      });
      // A new default replaces it; null removes the survey and its sealed defaults.
      await h.http
        .put(`/v1/templates/${t.id}`)
        .set(bearer(op.token))
        .send({ survey: [{ ...SURVEY[3], default: 'another-default-1' }] });
      let stored = await h.tdb.db.repos.templates.findById(t.id);
      expect(h.keyring.decrypt(stored!.secret_defaults_enc!).toString('utf8')).toContain('another-default-1');
      const cleared = await h.http
        .put(`/v1/templates/${t.id}`)
        .set(bearer(op.token))
        .send({ survey: null, description: null });
      expect(cleared.body).toMatchObject({ survey: null, description: null });
      stored = await h.tdb.db.repos.templates.findById(t.id);
      expect(stored!.secret_defaults_enc).toBeNull();
      expect(await auditText()).not.toContain('another-default-1');
      const audit = await h.tdb.db.repos.audit.list({ object: t.id }, { limit: 10 });
      expect(audit.map((e) => e.action)).toEqual([
        'template.update',
        'template.update',
        'template.update',
        'template.create',
      ]);
    });

    it('re-validates a new spec: 400 at body.spec.…, 404 for an unknown object, 422 for a missing playbook; refs follow', async () => {
      const op = await h.user('operator');
      const t = await runTemplate(op.token);
      const put = (body: unknown) =>
        h.http
          .put(`/v1/templates/${t.id}`)
          .set(bearer(op.token))
          .send(body as object);
      expectProblem(await put({ spec: { inventory: INI } }), 400, 'body.spec.playbook');
      expectProblem(await put({ spec: { playbook: PLAYBOOK, inventory: INI, color: 1 } }), 400, 'body.spec');
      expectProblem(await put({ spec: { playbook: PLAYBOOK, inventory_id: UNKNOWN.inv } }), 404);
      expectProblem(await put({ spec: { playbook: PLAYBOOK, inventory: '[x\n' } }), 400, 'body.spec.inventory');
      const prj = await project(op.token);
      expectProblem(
        await put({ spec: { playbook: 'nope.yml', project_id: prj, inventory: INI } }),
        422,
        'body.spec.playbook',
      );
      expectProblem(await put({ kind: 'pipeline' }), 400, 'body.spec');
      expectProblem(await put({ kind: 'pipeline', spec: { playbook: PLAYBOOK, inventory: INI } }), 400, 'body.spec');
      expectProblem(await put({}), 400);
      expectProblem(await put({ survey: [{ ...SURVEY[2], default: '$encrypted$' }] }), 400, 'body.survey.0.default');
      // Unchanged by the refusals:
      expect((await h.http.get(`/v1/templates/${t.id}`).set(bearer(op.token))).body.spec).toEqual({
        playbook: PLAYBOOK,
        inventory_id: t.inv,
      });
      const inv2 = await inventory(op.token);
      const ok = await put({ spec: { playbook: 'site.yml', project_id: prj, inventory_id: inv2 } });
      expect(ok.status).toBe(200);
      expect(ok.body.spec).toEqual({ playbook: 'site.yml', project_id: prj, inventory_id: inv2 });
      expect(await h.tdb.db.repos.launchRefs.ownersOf(t.inv)).toEqual([]);
      expect((await h.tdb.db.repos.launchRefs.ownersOf(inv2)).map((o) => o.id)).toEqual([t.id]);
      expect((await h.tdb.db.repos.launchRefs.ownersOf(prj)).map((o) => o.id)).toEqual([t.id]);
    });

    it('checks a new spec with the updater’s grants: a manager cannot put in objects they may not use', async () => {
      const owner = await h.user('operator');
      const manager = await h.user('operator');
      const t = await runTemplate(owner.token);
      await grant(owner.token, manager.id, t.id, 'manage');
      const ownersOnly = await inventory(owner.token);
      const put = (body: unknown) =>
        h.http
          .put(`/v1/templates/${t.id}`)
          .set(bearer(manager.token))
          .send(body as object);
      expectProblem(await put({ spec: { playbook: PLAYBOOK, inventory_id: ownersOnly } }), 404);
      const managersOnly = await inventory(manager.token);
      // ... nor objects the owner (whose authority launches use) cannot.
      expectProblem(await put({ spec: { playbook: PLAYBOOK, inventory_id: managersOnly } }), 404);
      await grant(owner.token, manager.id, ownersOnly, 'use');
      expect((await put({ spec: { playbook: PLAYBOOK, inventory_id: ownersOnly } })).status).toBe(200);
    });

    it('answers 404 for unknown or invisible templates and 409 for a taken name', async () => {
      const op = await h.user('operator');
      const a = await runTemplate(op.token);
      const b = await runTemplate(op.token);
      expectProblem(await h.http.put(`/v1/templates/${UNKNOWN.tpl}`).set(bearer(op.token)).send({ name: 'x' }), 404);
      const other = await h.user('operator');
      expectProblem(await h.http.put(`/v1/templates/${a.id}`).set(bearer(other.token)).send({ name: 'x' }), 404);
      expectProblem(
        await h.http.put(`/v1/templates/${a.id}`).set(bearer(op.token)).send({ name: b.res.body.name }),
        409,
      );
      expectProblem(
        await h.http.put('/v1/templates/tpl_bad').set(bearer(op.token)).send({ name: 'x' }),
        400,
        'path.id',
      );
    });
  });

  describe('delete', () => {
    it('deletes: 204, grants and launch refs gone, audited; then 404', async () => {
      const op = await h.user('operator');
      const t = await runTemplate(op.token);
      const res = await h.http.delete(`/v1/templates/${t.id}`).set(bearer(op.token));
      expect(res.status).toBe(204);
      expectProblem(await h.http.get(`/v1/templates/${t.id}`).set(bearer(op.token)), 404);
      expectProblem(await h.http.delete(`/v1/templates/${t.id}`).set(bearer(op.token)), 404);
      expect((await h.http.get(`/v1/grants?object=${t.id}`).set(bearer(h.admin.token))).body).toEqual([]);
      expect(await h.tdb.db.repos.launchRefs.ownersOf(t.inv)).toEqual([]);
      const audit = await h.tdb.db.repos.audit.list({ object: t.id }, { limit: 10 });
      expect(audit.map((e) => e.action)).toEqual(['template.delete', 'template.create']);
    });

    it('answers 409 naming the schedules and triggers that launch it, and deletes once they are gone', async () => {
      const op = await h.user('operator');
      const t = await runTemplate(op.token);
      const k = h.tdb.db.kysely;
      const now = new Date().toISOString();
      const sch = newId('sch');
      const trg = newId('trg');
      const common = { created_by: op.id, created_at: now, updated_at: now, target_secrets_enc: null };
      await k
        .insertInto('schedules')
        .values({
          ...common,
          id: sch,
          name: unique('nightly'),
          cron: '0 3 * * *',
          timezone: 'UTC',
          enabled: 1,
          target: JSON.stringify({ template_id: t.id }),
          template_id: t.id,
          next_run_at: null,
          last_run_id: null,
          last_fired_at: null,
          last_error: null,
        })
        .execute();
      await k
        .insertInto('triggers')
        .values({
          ...common,
          id: trg,
          name: unique('on push'),
          token: `tok-${trg}`,
          secret_enc: 'x',
          require_signature: 1,
          filters: '{}',
          target: JSON.stringify({ template_id: t.id }),
          template_id: null,
          last_delivery_at: null,
          last_run_id: null,
        })
        .execute();
      // The trigger is known through launch_refs only, the schedule through its template_id column too.
      await h.tdb.db.repos.launchRefs.replace(trg, [t.id]);
      await h.tdb.db.repos.launchRefs.replace(sch, [t.id]);
      const res = await h.http.delete(`/v1/templates/${t.id}`).set(bearer(op.token));
      expectProblem(res, 409);
      // The operator holds no grant on either: counted, not named.
      expect(res.body.detail).toBe(`template ${t.id} is used by 2 more you cannot see`);
      const asAdmin = await h.http.delete(`/v1/templates/${t.id}`).set(bearer(h.admin.token));
      expectProblem(asAdmin, 409);
      expect(asAdmin.body.detail).toContain(`schedule ${sch}`);
      expect(asAdmin.body.detail).toContain(`trigger ${trg}`);
      expect((await h.http.get(`/v1/templates/${t.id}`).set(bearer(op.token))).status).toBe(200);
      await k.deleteFrom('schedules').where('id', '=', sch).execute();
      await k.deleteFrom('triggers').where('id', '=', trg).execute();
      await h.tdb.db.repos.launchRefs.deleteOwner(sch);
      await h.tdb.db.repos.launchRefs.deleteOwner(trg);
      expect((await h.http.delete(`/v1/templates/${t.id}`).set(bearer(op.token))).status).toBe(204);
    });

    it('keeps the runs of a deleted template, still listed by ?template=', async () => {
      const op = await h.user('operator');
      const t = await runTemplate(op.token);
      const run = await launch(op.token, t.id, {});
      expect(run.status).toBe(201);
      const other = await runTemplate(op.token);
      expect((await launch(op.token, other.id, {})).status).toBe(201);
      expect(ids(await h.http.get(`/v1/runs?template=${t.id}`).set(bearer(op.token)))).toEqual([run.body.id]);
      expect((await h.http.delete(`/v1/templates/${t.id}`).set(bearer(op.token))).status).toBe(204);
      expect(ids(await h.http.get(`/v1/runs?template=${t.id}`).set(bearer(op.token)))).toEqual([run.body.id]);
      expect((await h.http.get(`/v1/runs?origin=template&limit=500`).set(bearer(op.token))).status).toBe(200);
    });
  });

  describe('pipeline templates', () => {
    const steps = (inv: string) => [
      { name: 'first', playbook: PLAYBOOK, extra_vars: { env: 'from-step', own: 1 } },
      { name: 'second', playbook: PLAYBOOK, inventory_id: inv, limit: 'db', run_if: 'always' },
    ];

    it('saves a pipeline template checked as a pipeline submission, with refs of every step', async () => {
      const op = await h.user('operator');
      const inv = await inventory(op.token);
      const stepInv = await inventory(op.token);
      const res = await createTemplate(op.token, {
        kind: 'pipeline',
        spec: { steps: steps(stepInv), inventory_id: inv, extra_vars: { a: 1 } },
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ kind: 'pipeline', spec: { inventory_id: inv, steps: steps(stepInv) } });
      for (const object of [inv, stepInv])
        expect((await h.tdb.db.repos.launchRefs.ownersOf(object)).map((o) => o.id)).toEqual([res.body.id]);
      expectProblem(
        await createTemplate(op.token, { kind: 'pipeline', spec: { steps: [{ inventory: INI }] } }),
        400,
        'body.spec.steps.0.playbook',
      );
      expectProblem(await createTemplate(op.token, { kind: 'pipeline', spec: { steps: [] } }), 400, 'body.spec.steps');
      expectProblem(
        await createTemplate(op.token, {
          kind: 'pipeline',
          spec: { steps: [{ playbook: PLAYBOOK, inventory_id: UNKNOWN.inv }] },
        }),
        404,
      );
      const prj = await project(op.token);
      expectProblem(
        await createTemplate(op.token, {
          kind: 'pipeline',
          spec: { inventory: INI, steps: [{ playbook: PLAYBOOK }, { playbook: 'nope.yml', project_id: prj }] },
        }),
        422,
        'body.spec.steps.1.playbook',
      );
    });

    it('launches a pipeline: answers and extra_vars at the pipeline and over every step’s own, other overrides on every step', async () => {
      const op = await h.user('operator');
      const inv = await inventory(op.token);
      const stepInv = await inventory(op.token);
      const other = await inventory(op.token, '[web]\nweb9\n\n[db]\ndb9\n');
      const res = await createTemplate(op.token, {
        kind: 'pipeline',
        spec: { steps: steps(stepInv), inventory_id: inv, extra_vars: { a: 1 } },
        survey: [SURVEY[2], SURVEY[7]],
        allow_overrides: ['limit', 'inventory_id', 'extra_vars', 'check'],
      });
      expect(res.status).toBe(201);
      const launcher = await h.user('operator');
      await grant(op.token, launcher.id, res.body.id as string, 'use');
      const run = await launch(launcher.token, res.body.id as string, {
        survey_answers: { db_password: PASSWORD_ANSWER, env: 'prod' },
        overrides: { limit: 'web', inventory_id: other, extra_vars: { a: 2 }, check: true },
      });
      expect(run.status).toBe(201);
      expect(run.body).toMatchObject({
        kind: 'pipeline',
        origin: 'template',
        template_id: res.body.id,
        submitted_by: launcher.id,
        survey_answers: { env: 'prod' },
        inventory_id: other,
        extra_vars: { a: 2, env: 'prod', db_password: '$encrypted$' },
      });
      const stepsRes = await h.http.get(`/v1/runs/${run.body.id}/steps`).set(bearer(launcher.token));
      expect(stepsRes.status).toBe(200);
      const got = stepsRes.body as Array<Record<string, unknown>>;
      expect(got).toHaveLength(2);
      for (const step of got)
        expect(step).toMatchObject({ template_id: res.body.id, inventory_id: other, limit: 'web', check: true });
      expect(got[0]!.extra_vars).toEqual({ a: 2, env: 'prod', own: 1, db_password: '$encrypted$' });
      expect(got[1]!.extra_vars).toEqual({ a: 2, env: 'prod', db_password: '$encrypted$' });
      const stepRow = await runRow(got[0]!.id as string);
      expect(JSON.parse(h.keyring.decrypt(stepRow.secret_vars_enc!).toString('utf8'))).toEqual({
        db_password: PASSWORD_ANSWER,
      });
      expect(stepsRes.text).not.toContain(PASSWORD_ANSWER);
      expect(ids(await h.http.get(`/v1/runs?template=${res.body.id}`).set(bearer(launcher.token)))).toEqual([
        run.body.id,
      ]);
      expectProblem(
        await launch(launcher.token, res.body.id as string, {
          survey_answers: { db_password: PASSWORD_ANSWER, env: 'prod' },
          overrides: { shards: 2 },
        }),
        400,
        'body.overrides.shards',
      );
    });

    it('turns a run template into a pipeline template with PUT (kind and spec together)', async () => {
      const op = await h.user('operator');
      const t = await runTemplate(op.token);
      const res = await h.http
        .put(`/v1/templates/${t.id}`)
        .set(bearer(op.token))
        .send({ kind: 'pipeline', spec: { inventory_id: t.inv, steps: [{ playbook: PLAYBOOK }] } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ kind: 'pipeline', spec: { inventory_id: t.inv } });
      const run = await launch(op.token, t.id, {});
      expect(run.status).toBe(201);
      expect(run.body).toMatchObject({ kind: 'pipeline', template_id: t.id });
    });
  });

  it('describes the template operations in the OpenAPI document', async () => {
    const res = await h.http.get('/v1/openapi.json');
    const paths = res.body.paths as Record<string, Record<string, { operationId: string }>>;
    expect(paths['/v1/templates']!.post!.operationId).toBe('createTemplate');
    expect(paths['/v1/templates']!.get!.operationId).toBe('listTemplates');
    expect(paths['/v1/templates/{id}']!.get!.operationId).toBe('getTemplate');
    expect(paths['/v1/templates/{id}']!.put!.operationId).toBe('updateTemplate');
    expect(paths['/v1/templates/{id}']!.delete!.operationId).toBe('deleteTemplate');
    expect(paths['/v1/templates/{id}/launch']!.post!.operationId).toBe('launchTemplate');
  });
});
