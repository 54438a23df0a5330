// The events that do not come from a run's own success or failure (issue 17), on both databases: a schedule that
// cannot fire (schedule.error) and a run whose worker was lost (worker.lost, besides its run.failed).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DIALECTS } from '@baton/db/testing';
import { bearer, createHarness, type Harness } from '../testing/harness.js';

const LOCAL = 'localhost ansible_connection=local\n';
const PLAY = '- hosts: all\n  gather_facts: false\n  tasks: []\n';

describe.each(DIALECTS)('schedule.error and worker.lost notifications on %s', (dialect) => {
  let h: Harness;
  let server: http.Server;
  let url: string;
  const got: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    h = await createHarness(dialect, { notify: { allowPrivate: true } });
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        got.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const n = await h.http
      .post('/v1/notifiers')
      .set(bearer(h.admin.token))
      .send({ name: 'ops', kind: 'webhook', config: { url }, events: ['schedule.error', 'worker.lost', 'run.failed'] });
    expect(n.status).toBe(201);
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await h.close();
  });

  const drain = async () => {
    for (let i = 0; i < 5; i++) await h.services.notifySender.tick();
  };

  it('tells of a schedule that could not fire, with its error', async () => {
    const s = await h.http
      .post('/v1/schedules')
      .set(bearer(h.admin.token))
      .send({ name: 'nightly', cron: '0 3 * * *', target: { run: { playbook: PLAY, inventory: LOCAL } } });
    expect(s.status).toBe(201);
    const dueAt = '2026-11-27T03:00:00.000Z';
    await h.tdb.db.repos.schedules.recordFire(s.body.id, dueAt, {
      run_id: null,
      error: 'the owner can no longer use the inventory',
      fired_at: dueAt,
    });
    await drain();
    const event = got.find((g) => g.event === 'schedule.error');
    expect(event).toMatchObject({
      schedule: { id: s.body.id, name: 'nightly', error: 'the owner can no longer use the inventory' },
      run: null,
    });
  });

  it('tells of a run lost with its worker twice: as worker.lost and as run.failed', async () => {
    const run = await h.http.post('/v1/runs').set(bearer(h.admin.token)).send({ playbook: PLAY, inventory: LOCAL });
    expect(run.status).toBe(201);
    const repos = h.tdb.db.repos;
    const at = new Date().toISOString();
    expect(
      await repos.runs.transition(run.body.id, ['pending'], { status: 'running', started_at: at, worker: 'w-9' }),
    ).toBe(true);
    expect(
      await repos.runs.transition(run.body.id, ['running'], {
        status: 'finished',
        conclusion: 'error',
        reason: 'worker_lost',
        finished_at: at,
      }),
    ).toBe(true);
    await drain();
    const mine = got.filter((g) => (g.run as { id?: string } | null)?.id === run.body.id);
    expect(mine.map((g) => g.event).sort()).toEqual(['run.failed', 'worker.lost']);
    expect(mine.find((g) => g.event === 'worker.lost')).toMatchObject({ worker: { name: 'w-9', runs: [run.body.id] } });
  });
});
