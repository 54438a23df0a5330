// Password answers end to end (issue 11, "Templates"): a real ansible-playbook run of a template whose survey has
// password questions, printing them with debug. The executor masks them like credential secrets before any event
// leaves it, so the stored log, the events, the run and the audit trail hold only the mask.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Run, RunEvent } from '@baton/contracts';
import { DIALECTS } from '@baton/db/testing';
import { bearer, createHarness, type Harness, runFinished } from '../testing/harness.js';

const LOCAL = 'localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n';
const PLAYBOOK = `- hosts: all
  gather_facts: false
  tasks:
    - ansible.builtin.debug:
        msg: "answer={{ pw }}"
    - ansible.builtin.debug:
        var: pw
    - ansible.builtin.debug:
        var: token
    - ansible.builtin.debug:
        msg: "env={{ env }}"
`;
/** A `"` in it: JSON output escapes it, so the mask must cover that form too. */
const ANSWER = 'Sw0rd"fish-answer-7Qm2';
const DEFAULT = 'default-token-Kp9vX3zL';

describe.each(DIALECTS)('template password answers masked in a real run on %s', (dialect) => {
  let h: Harness;
  let auth: Record<string, string>;

  beforeAll(async () => {
    h = await createHarness(dialect, { executors: { count: 1 } });
    auth = bearer(h.admin.token);
  });
  afterAll(async () => {
    await h.close();
  });

  const finished = (id: string) => runFinished(h, id, h.admin.token);

  it('prints only ******** for password answers and defaults in the log and the events; the run shows $encrypted$', async () => {
    const op = await h.user('operator');
    const inv = await h.http
      .post('/v1/inventories')
      .set(bearer(op.token))
      .send({ name: `local ${dialect}`, content: LOCAL });
    expect(inv.status).toBe(201);
    const tpl = await h.http
      .post('/v1/templates')
      .set(bearer(op.token))
      .send({
        name: `masked ${dialect}`,
        kind: 'run',
        spec: { playbook: PLAYBOOK, inventory_id: inv.body.id },
        survey: [
          { variable: 'pw', question: 'Password?', type: 'password', required: true, min: 8 },
          { variable: 'token', question: 'Token?', type: 'password', required: false, default: DEFAULT },
          { variable: 'env', question: 'Where?', type: 'choice', required: true, choices: ['staging', 'prod'] },
        ],
      });
    expect(tpl.status).toBe(201);
    const launched = await h.http
      .post(`/v1/templates/${tpl.body.id}/launch`)
      .set(bearer(op.token))
      .send({ survey_answers: { pw: ANSWER, env: 'prod' } });
    expect(launched.status).toBe(201);
    const run = await finished(launched.body.id as string);
    expect(run).toMatchObject({
      conclusion: 'succeeded',
      origin: 'template',
      template_id: tpl.body.id,
      survey_answers: { env: 'prod' },
      extra_vars: { pw: '$encrypted$', token: '$encrypted$', env: 'prod' },
    });

    const log = (await h.http.get(`/v1/runs/${run.id}/logs`).set(auth)).text;
    expect(log).toContain('answer=********');
    expect(log).toContain('"pw": "********"');
    expect(log).toContain('"token": "********"');
    expect(log).toContain('env=prod'); // what is not secret stays
    const eventsRes = await h.http.get(`/v1/runs/${run.id}/events?limit=500`).set(auth);
    expect(eventsRes.status).toBe(200);
    const events = eventsRes.body as RunEvent[];
    const ok = events.filter((e) => e.kind === 'runner_on_ok');
    expect(ok.length).toBe(4);
    expect(JSON.stringify(ok)).toContain('********');

    const forms = [ANSWER, JSON.stringify(ANSWER).slice(1, -1), 'Sw0rd', 'fish-answer', DEFAULT];
    const everything = [
      log,
      eventsRes.text,
      (await h.http.get(`/v1/runs/${run.id}`).set(auth)).text,
      (await h.http.get(`/v1/runs?template=${tpl.body.id}`).set(auth)).text,
      (await h.http.get(`/v1/templates/${tpl.body.id}`).set(auth)).text,
      (await h.http.get('/v1/audit?limit=500').set(auth)).text,
    ];
    for (const text of everything) for (const form of forms) expect(text).not.toContain(form);
    // Nor anywhere in the stored events, whatever their kind.
    const stored = await h.tdb.db.repos.runEvents.list(run.id, { limit: 1000 });
    expect(stored.length).toBeGreaterThan(0);
    for (const form of forms) expect(JSON.stringify(stored)).not.toContain(form);
  }, 120_000);

  it('masks a password answer in every step of a pipeline template', async () => {
    const op = await h.user('operator');
    const tpl = await h.http
      .post('/v1/templates')
      .set(bearer(op.token))
      .send({
        name: `masked pipeline ${dialect}`,
        kind: 'pipeline',
        spec: {
          inventory: LOCAL,
          steps: [
            { name: 'one', playbook: PLAYBOOK, extra_vars: { env: 'step-own' } },
            { name: 'two', playbook: PLAYBOOK },
          ],
        },
        survey: [
          { variable: 'pw', question: 'Password?', type: 'password', required: true },
          { variable: 'token', question: 'Token?', type: 'password', required: false, default: DEFAULT },
          { variable: 'env', question: 'Where?', type: 'text', required: true },
        ],
      });
    expect(tpl.status).toBe(201);
    const launched = await h.http
      .post(`/v1/templates/${tpl.body.id}/launch`)
      .set(bearer(op.token))
      .send({ survey_answers: { pw: ANSWER, env: 'prod' } });
    expect(launched.status).toBe(201);
    const pipeline = await finished(launched.body.id as string);
    expect(pipeline).toMatchObject({ kind: 'pipeline', conclusion: 'succeeded', template_id: tpl.body.id });
    const steps = (await h.http.get(`/v1/runs/${pipeline.id}/steps`).set(auth)).body as Run[];
    expect(steps).toHaveLength(2);
    for (const step of steps) {
      expect(step).toMatchObject({ conclusion: 'succeeded', extra_vars: { pw: '$encrypted$', env: 'prod' } });
      const log = (await h.http.get(`/v1/runs/${step.id}/logs`).set(auth)).text;
      expect(log).toContain('answer=********');
      expect(log).toContain('"token": "********"');
      expect(log).toContain('env=prod'); // the answer wins over the step's own var
      const events = (await h.http.get(`/v1/runs/${step.id}/events?limit=500`).set(auth)).text;
      for (const form of [ANSWER, JSON.stringify(ANSWER).slice(1, -1), DEFAULT]) {
        expect(log).not.toContain(form);
        expect(events).not.toContain(form);
      }
    }
  }, 120_000);
});
