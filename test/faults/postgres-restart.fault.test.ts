// PostgreSQL stopped and started again under a load of reads and run submits, with `baton serve` left running: while
// the database is away every answer is a success or a 503 problem (never a 500) and /readyz says not ready; afterwards
// Baton serves again without a restart, every accepted run exists whole and finishes, and no refused submit left a row.
// The cluster is the test's own (the shared one on 5432 is never stopped).
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import type { Run } from '@baton/contracts';
import {
  ADMIN_PASSWORD,
  call,
  cleanupProcesses,
  login,
  serve,
  type Server,
  tempDir,
  waitFor,
} from '../support/baton-process.js';
import { createPgCluster, type PgCluster } from '../support/pg-cluster.js';
import {
  allEvents,
  expectGapFreeAndFinal,
  finishedRun,
  LOCAL_INVENTORY,
  recordingClient,
  unexpectedAnswers,
} from './support.js';

let cluster: PgCluster | undefined;
let server: Server | undefined;
afterAll(async () => {
  await server?.kill();
  await cluster?.destroy();
  await cleanupProcesses();
});

/** A few tasks with a pause, so runs are running (and sending events) while the database goes away. */
const PLAYBOOK =
  '- hosts: all\n  gather_facts: false\n  tasks:\n' +
  '    - ansible.builtin.debug: {msg: one}\n' +
  '    - ansible.builtin.shell: sleep 0.5\n' +
  '    - ansible.builtin.debug: {msg: two}\n';

const readyStatus = (s: Server) =>
  fetch(`${s.base}/readyz`).then(
    (r) => r.status,
    () => 0,
  );

describe('PostgreSQL restarted under load', () => {
  it('answers 503 while it is away, never 500, and recovers without a restart with nothing half-written', async () => {
    cluster = await createPgCluster();
    server = await serve({
      BATON_DATABASE_URL: cluster.url,
      BATON_DATA_DIR: path.join(tempDir('baton-pg-fault-'), 'data'),
      BATON_ADMIN_PASSWORD: ADMIN_PASSWORD,
      BATON_SANDBOX: 'off',
      BATON_EXECUTORS: '2',
    });
    const s = server;
    const { token } = await login(s.base, 'admin', ADMIN_PASSWORD);
    const inv = await call(s, token!, 'POST', '/v1/inventories', { name: 'local', content: LOCAL_INVENTORY });
    expect(inv.status).toBe(201);

    const client = recordingClient(s.base, token!);
    const accepted: string[] = [];
    let loading = true;
    const submitter = (async () => {
      while (loading) {
        const a = await client.request('POST', '/v1/runs', { playbook: PLAYBOOK, inventory_id: inv.body.id });
        if (a?.status === 201) accepted.push((JSON.parse(a.body) as Run).id);
        await new Promise((r) => setTimeout(r, 300));
      }
    })();
    const readers = [0, 1, 2].map(async (n) => {
      while (loading) {
        await client.request('GET', '/v1/runs?limit=20');
        const latest = accepted.at(-1);
        if (n === 0 || latest === undefined) await client.request('GET', '/v1/inventories');
        else {
          await client.request('GET', `/v1/runs/${latest}`);
          await client.request('GET', `/v1/runs/${latest}/events?limit=50`);
        }
      }
    });

    try {
      await waitFor('three runs accepted', async () => (accepted.length >= 3 ? true : undefined));
      const before = client.answers.length;
      await cluster.stop('immediate');
      const downAt = client.answers.length;
      // Not ready while it is away, and the load meets the outage (503s) for a few seconds.
      await waitFor('/readyz to say not ready', async () => ((await readyStatus(s)) === 503 ? true : undefined));
      await waitFor('a few 503s under load', async () =>
        client.answers.slice(downAt).filter((a) => a.status === 503).length >= 10 ? true : undefined,
      );
      await new Promise((r) => setTimeout(r, 2_000));
      expect(await readyStatus(s)).toBe(503);
      await cluster.start();
      await waitFor('/readyz to say ready again', async () => ((await readyStatus(s)) === 200 ? true : undefined));
      const upAt = accepted.length;
      await waitFor('a run accepted after the restart', async () => (accepted.length > upAt ? true : undefined));
      expect(client.answers.length).toBeGreaterThan(before);
    } finally {
      loading = false;
      await Promise.all([submitter, ...readers]);
    }

    expect(client.transportErrors).toEqual([]);
    expect(unexpectedAnswers(client.answers, 'database-unavailable')).toEqual([]);
    expect(client.answers.filter((a) => a.status === 503).length).toBeGreaterThanOrEqual(10);

    // Nothing half-written: the runs stored are exactly the accepted ones (a refused submit left nothing), each one
    // finishes (none stuck), and its events are numbered 1..N ending with its final status.
    const stored = await call<Run[]>(s, token!, 'GET', '/v1/runs?limit=500');
    expect(stored.body.map((r) => r.id).sort()).toEqual([...accepted].sort());
    for (const id of accepted) {
      const run = await finishedRun(s, token!, id);
      expect(['succeeded', 'error']).toContain(run.conclusion);
      expectGapFreeAndFinal(await allEvents(s, token!, id), run);
    }
    const log = await fetch(`${s.base}/v1/runs/${accepted.at(-1)!}/logs`, {
      headers: { Authorization: `Bearer ${token!}` },
    });
    expect(log.status).toBe(200);
    expect(server.output()).not.toContain('"unhandled error"');
  }, 240_000);
});
