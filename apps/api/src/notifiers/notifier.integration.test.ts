// Notifications end to end (issue 17) on both databases: notifiers through the API, real runs writing the outbox,
// the sender fanning out and delivering to a local HTTP receiver through the real transport (signature verified),
// retries, refusals, deletion while pending, visibility, and two senders delivering each notification once.
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Delivery, Run } from '@baton/contracts';
import { createNotifySender } from '@baton/core';
import { DIALECTS } from '@baton/db/testing';
import { bearer, createHarness, type Harness, runFinished } from '../testing/harness.js';
import { createNotifyTransport } from './delivery/transport.js';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A local receiver: records every request; answers with the next scripted status (200 when none is left). */
async function receiver() {
  const got: Received[] = [];
  const script: number[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(script.shift() ?? 200, { 'content-type': 'text/plain' }).end('ok from receiver');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { got, script, url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const LOCAL = 'localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n';
const OK_PLAYBOOK = '- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.debug: { msg: hi }\n';
const FAIL_PLAYBOOK = '- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.fail: { msg: boom }\n';

describe.each(DIALECTS)('notifications on %s', (dialect) => {
  let h: Harness;
  let rx: Awaited<ReturnType<typeof receiver>>;
  let admin: Record<string, string>;

  beforeAll(async () => {
    h = await createHarness(dialect, { executors: { count: 1 }, notify: { allowPrivate: true } });
    admin = bearer(h.admin.token);
    rx = await receiver();
  });
  afterAll(async () => {
    await rx.close();
    await h.close();
  });

  /** Ticks the sender until nothing is left to do now. */
  const drain = async () => {
    for (let i = 0; i < 20; i++) {
      const { queued, attempted } = await h.services.notifySender.tick();
      if (queued === 0 && attempted === 0) return;
    }
  };
  const deliveries = async (id: string, token = h.admin.token) =>
    (await h.http.get(`/v1/notifiers/${id}/deliveries`).set(bearer(token))).body as Delivery[];
  const createWebhook = async (token: string, over: Record<string, unknown> = {}) => {
    const r = await h.http
      .post('/v1/notifiers')
      .set(bearer(token))
      .send({
        name: `hook ${crypto.randomUUID().slice(0, 8)}`,
        kind: 'webhook',
        config: { url: rx.url, headers: { 'X-Token': 'header-secret-value' } },
        events: ['run.succeeded', 'run.failed', 'run.started'],
        ...over,
      });
    expect(r.status).toBe(201);
    return r.body as { id: string; secret: string; secret_fields: string[] };
  };
  const submit = async (token: string, playbook: string) => {
    const r = await h.http.post('/v1/runs').set(bearer(token)).send({ playbook, inventory: LOCAL });
    expect(r.status).toBe(201);
    return runFinished(h, r.body.id as string, h.admin.token);
  };

  it('creates a webhook notifier whose secret is shown once and whose header values never come back', async () => {
    const op = await h.user('operator');
    const n = await createWebhook(op.token);
    expect(n.secret).toEqual(expect.any(String));
    expect(n.secret_fields).toEqual(['secret', 'headers.X-Token']);
    const got = await h.http.get(`/v1/notifiers/${n.id}`).set(bearer(op.token));
    expect(got.status).toBe(200);
    expect(got.body.config).toEqual({ url: rx.url, header_names: ['X-Token'] });
    expect(got.text).not.toContain(n.secret);
    expect(got.text).not.toContain('header-secret-value');
    // A stranger does not see it; a viewer cannot create one.
    const stranger = await h.user('operator');
    expect((await h.http.get(`/v1/notifiers/${n.id}`).set(bearer(stranger.token))).status).toBe(404);
    const viewer = await h.user('viewer');
    const refused = await h.http
      .post('/v1/notifiers')
      .set(bearer(viewer.token))
      .send({ name: 'v', kind: 'slack', config: { url: rx.url }, events: ['run.failed'] });
    expect(refused.status).toBe(403);
  });

  it.each([
    ['a URL with credentials', { config: { url: 'https://user:pw@example.com/h' } }, 'body.config.url'],
    ['a non-http URL', { config: { url: 'ftp://example.com/h' } }, 'body.config.url'],
    ['an unknown event', { events: ['run.exploded'] }, 'body.events.0'],
    ['no events', { events: [] }, 'body.events'],
    [
      'a header Baton sets',
      { config: { url: 'https://example.com', headers: { 'Content-Type': 'x' } } },
      'body.config.headers',
    ],
  ])('refuses %s with a 400 at its path', async (_what, over, path) => {
    const r = await h.http
      .post('/v1/notifiers')
      .set(admin)
      .send({
        name: 'bad',
        kind: 'webhook',
        config: { url: 'https://example.com/h' },
        events: ['run.failed'],
        ...over,
      });
    expect(r.status).toBe(400);
    expect(r.body.errors.map((e: { path: string }) => e.path)).toEqual(
      expect.arrayContaining([expect.stringContaining(path)]),
    );
  });

  it('tells a webhook of a run’s start and outcome, signed, with an idempotency key, and logs the delivery', async () => {
    const op = await h.user('operator');
    const n = await createWebhook(op.token);
    const before = rx.got.length;
    const run: Run = await submit(op.token, FAIL_PLAYBOOK);
    expect(run.conclusion).toBe('failed');
    await drain();
    const mine = rx.got.slice(before).filter((g) => JSON.parse(g.body).run?.id === run.id);
    expect(mine.map((g) => JSON.parse(g.body).event).sort()).toEqual(['run.failed', 'run.started']);
    for (const g of mine) {
      const expected = crypto.createHmac('sha256', n.secret).update(g.body).digest('hex');
      expect(g.headers['x-baton-signature-256']).toBe(`sha256=${expected}`);
      expect(g.headers['idempotency-key']).toMatch(/^dlv_/);
      expect(g.headers['x-token']).toBe('header-secret-value');
    }
    const failed = JSON.parse(mine.find((g) => JSON.parse(g.body).event === 'run.failed')!.body);
    expect(failed.run).toMatchObject({ id: run.id, status: 'finished', conclusion: 'failed', origin: 'api' });
    expect(failed.run.url).toContain(`/ui/runs/${run.id}`);
    expect(failed.run.host_summary).toEqual({ failed: 1 });
    const log = await deliveries(n.id, op.token);
    expect(
      log
        .filter((d) => d.run_id === run.id)
        .map((d) => [d.event, d.status, d.response_code])
        .sort(),
    ).toEqual([
      ['run.failed', 'delivered', 200],
      ['run.started', 'delivered', 200],
    ]);
  }, 120_000);

  it('hears only of runs its owner may see', async () => {
    const owner = await h.user('operator');
    const n = await createWebhook(owner.token, { events: ['run.succeeded'] });
    const other = await h.user('operator');
    const run = await submit(other.token, OK_PLAYBOOK);
    await drain();
    expect((await deliveries(n.id, owner.token)).filter((d) => d.run_id === run.id)).toEqual([]);
  }, 120_000);

  it('retries after a 500 with backoff, then delivers', async () => {
    const n = await createWebhook(h.admin.token, { events: ['run.succeeded'] });
    rx.script.push(500);
    const test = await h.http.post(`/v1/notifiers/${n.id}/test`).set(admin).send();
    expect(test.status).toBe(202);
    await h.services.notifySender.deliverDue();
    const [first] = await deliveries(n.id);
    expect(first).toMatchObject({ id: test.body.delivery.id, status: 'retrying', attempts: 1, response_code: 500 });
    expect(Date.parse(first!.next_attempt_at!)).toBeGreaterThan(Date.now() + 20_000);
    // Time passes: the next attempt is due now.
    await h.tdb.db.kysely
      .updateTable('notification_deliveries')
      .set({ next_attempt_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', first!.id)
      .execute();
    await h.services.notifySender.deliverDue();
    expect((await deliveries(n.id))[0]).toMatchObject({ status: 'delivered', attempts: 2, response_code: 200 });
  });

  it('a notifier deleted while a delivery is pending sends nothing', async () => {
    const n = await createWebhook(h.admin.token);
    await h.http.post(`/v1/notifiers/${n.id}/test`).set(admin).send();
    const before = rx.got.length;
    expect((await h.http.delete(`/v1/notifiers/${n.id}`).set(admin)).status).toBe(204);
    await drain();
    expect(rx.got.length).toBe(before);
    expect((await h.http.get(`/v1/notifiers/${n.id}/deliveries`).set(admin)).status).toBe(404);
  });

  it('two senders on one database deliver each notification once', async () => {
    const n = await createWebhook(h.admin.token, { events: ['run.succeeded'] });
    for (let i = 0; i < 3; i++) await h.http.post(`/v1/notifiers/${n.id}/test`).set(admin).send();
    const other = createNotifySender({
      notifiers: h.tdb.db.repos.notifiers,
      runs: h.tdb.db.repos.runs,
      schedules: h.tdb.db.repos.schedules,
      templates: h.tdb.db.repos.templates,
      projects: h.tdb.db.repos.projects,
      users: h.tdb.db.repos.users,
      transaction: h.tdb.db.transaction,
      canSee: async () => true,
      secretsOf: h.services.notifiers.secretsOf,
      transport: createNotifyTransport({ allowPrivate: true }),
      clock: () => new Date(),
      holder: 'second-replica',
      publicUrl: 'http://127.0.0.1:8080',
    });
    const before = rx.got.length;
    await Promise.all([h.services.notifySender.deliverDue(), other.deliverDue(), h.services.notifySender.deliverDue()]);
    const keys = rx.got.slice(before).map((g) => g.headers['idempotency-key']);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(3);
    expect((await deliveries(n.id)).every((d) => d.status === 'delivered' && d.attempts === 1)).toBe(true);
  });

  it('a run finishing writes its outbox entry in its own transaction, once', async () => {
    const run = await submit(h.admin.token, OK_PLAYBOOK);
    const rows = await h.tdb.db.kysely
      .selectFrom('notification_outbox')
      .selectAll()
      .where('subject_id', '=', run.id)
      .orderBy('id')
      .execute();
    expect(rows.map((r) => r.status).sort()).toEqual(['finished', 'running']);
  }, 120_000);

  it('posts a Slack-compatible message with the summary and a link, never showing the URL', async () => {
    const r = await h.http
      .post('/v1/notifiers')
      .set(admin)
      .send({
        name: `slack ${crypto.randomUUID().slice(0, 6)}`,
        kind: 'slack',
        config: { url: rx.url },
        events: ['run.failed'],
      });
    expect(r.status).toBe(201);
    expect(r.body.config).toEqual({ host: new URL(rx.url).host });
    expect(r.text).not.toContain('/hook');
    const before = rx.got.length;
    await h.http.post(`/v1/notifiers/${r.body.id}/test`).set(admin).send();
    await drain();
    const [sent] = rx.got.slice(before);
    expect(JSON.parse(sent!.body)).toEqual({ text: expect.stringContaining('Baton test message') });
  });

  it('refuses loopback and private destinations unless allowed, without contacting them', async () => {
    const refusing = createNotifyTransport({ allowPrivate: false });
    const before = rx.got.length;
    for (const url of [rx.url, 'http://10.1.2.3/x', 'http://[::1]:9/x', 'http://169.254.169.254/latest']) {
      const result = await refusing(
        { kind: 'webhook', config: { url }, secrets: { secret: 's' } },
        { event: 'test', at: new Date().toISOString(), run: null, summary: 't' },
        { deliveryId: 'dlv_test' },
      );
      expect(result).toMatchObject({ ok: false, retry: false, error: expect.stringContaining('refused') });
    }
    expect(rx.got.length).toBe(before);
  });

  it('a receiver that never answers is a timeout, retried later', async () => {
    const silent = http.createServer(() => {
      /* never answers */
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    const transport = createNotifyTransport({ allowPrivate: true, timeoutMs: 300 });
    const result = await transport(
      { kind: 'webhook', config: { url: `http://127.0.0.1:${port}/x` }, secrets: { secret: 's' } },
      { event: 'test', at: new Date().toISOString(), run: null, summary: 't' },
      { deliveryId: 'dlv_test' },
    );
    silent.closeAllConnections();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
    expect(result).toMatchObject({ ok: false, retry: true, error: expect.stringContaining('no answer') });
  });

  it('a replica that dies holding a delivery: nobody sends it while the lease holds, one replica after, its late record is ignored', async () => {
    const n = await createWebhook(h.admin.token, { events: ['run.succeeded'] });
    const test = await h.http.post(`/v1/notifiers/${n.id}/test`).set(admin).send();
    const id = test.body.delivery.id as string;
    const repos = h.tdb.db.repos;
    const now = new Date();
    // Replica "a" claims it for a minute, then dies before sending.
    expect(
      await repos.notifiers.claimDelivery(
        id,
        'replica-a',
        now.toISOString(),
        new Date(now.getTime() + 60_000).toISOString(),
      ),
    ).toBe(true);
    const before = rx.got.length;
    await h.services.notifySender.deliverDue();
    expect(rx.got.length).toBe(before);
    // The lease runs out: the next replica takes it and sends it once.
    await h.tdb.db.kysely
      .updateTable('notification_deliveries')
      .set({ lease_until: new Date(now.getTime() - 1000).toISOString() })
      .where('id', '=', id)
      .execute();
    await h.services.notifySender.deliverDue();
    await h.services.notifySender.deliverDue();
    expect(rx.got.slice(before).map((g) => g.headers['idempotency-key'])).toEqual([id]);
    // Replica "a" comes back and records what it thinks happened: its lease is gone, so nothing changes.
    expect(await repos.notifiers.recordAttempt(id, 'replica-a', { status: 'dead', attempts: 9 })).toBe(false);
    expect((await deliveries(n.id))[0]).toMatchObject({ id, status: 'delivered', attempts: 1 });
  });
});
