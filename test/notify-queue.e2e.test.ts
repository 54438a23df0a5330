// Notifications in queue mode (issue 17): two API replicas both run the sender against one PostgreSQL database, a
// worker runs the playbooks; every run's notification reaches the receiver exactly once (one delivery id each).
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type QueueCluster, startQueueCluster } from './support/queue-cluster.js';

const LOCAL = 'localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n';
const PLAY = '- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.debug: { msg: hi }\n';

describe('notifications with two replicas in queue mode', () => {
  let c: QueueCluster;
  let server: http.Server;
  let url: string;
  const got: Array<{ key: string; event: string; run: string }> = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (b: Buffer) => chunks.push(b));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { event: string; run?: { id: string } };
        got.push({ key: String(req.headers['idempotency-key']), event: body.event, run: body.run?.id ?? '' });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    c = await startQueueCluster({
      database: 'postgres',
      replicas: 2,
      workers: [{ name: `notify-${crypto.randomBytes(3).toString('hex')}`, concurrency: 2 }],
      env: { BATON_NOTIFY_ALLOW_PRIVATE: 'true' },
    });
  }, 180_000);
  afterAll(async () => {
    await c?.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('sends each run’s notification once, whichever replica claims it', async () => {
    const [a, b] = c.replicas;
    const created = await c.call<{ id: string }>(a!, 'POST', '/v1/notifiers', {
      name: 'queue hook',
      kind: 'webhook',
      config: { url },
      events: ['run.succeeded'],
    });
    expect(created.status).toBe(201);
    const inv = await c.inventory(a!, LOCAL);
    const runs = [];
    for (let i = 0; i < 4; i++) runs.push(await c.submit(i % 2 ? b! : a!, { playbook: PLAY, inventory_id: inv }));
    for (const run of runs) expect((await c.finished(a!, run.id)).conclusion).toBe('succeeded');
    const ids = runs.map((r) => r.id).sort();
    const deadline = Date.now() + 60_000; // a safety net, not a speed threshold
    while (new Set(got.map((g) => g.run)).size < ids.length && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    // A little longer: a second send of any of them would arrive now.
    await new Promise((r) => setTimeout(r, 3000));
    expect(got.map((g) => g.run).sort()).toEqual(ids);
    expect(new Set(got.map((g) => g.key)).size).toBe(ids.length);
    expect(got.every((g) => g.event === 'run.succeeded')).toBe(true);
  }, 300_000);
});
