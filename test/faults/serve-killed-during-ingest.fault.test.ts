// `baton serve` (embedded mode, SQLite) SIGKILLed while a run pours events into it, then started again on the same
// data directory: every event a client had seen is still stored as it was, the stored events run 1..N without a gap and
// end with the run's final status (error / worker_lost: the server that ran it died), and an SSE client resumes from
// the last id it had with nothing missing or repeated.
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import type { RunEvent } from '@baton/contracts';
import { openSse } from '../../apps/api/src/testing/sse-client.js';
import { ADMIN_PASSWORD, call, cleanupProcesses, login, serve, tempDir } from '../support/baton-process.js';
import { allEvents, expectGapFreeAndFinal, finishedRun, LOCAL_INVENTORY } from './support.js';

afterAll(cleanupProcesses);

/** Hundreds of events in a few seconds: one per loop item, each with its log chunk. */
const CHATTY_PLAYBOOK =
  '- hosts: all\n  gather_facts: false\n  tasks:\n' +
  '    - ansible.builtin.debug: {msg: "item {{ item }}"}\n      loop: "{{ range(0, 2000) | list }}"\n';

describe('baton serve killed during event ingest', () => {
  it('loses no stored event, keeps seq gap-free, ends the run error/worker_lost and resumes SSE', async () => {
    const env = {
      BATON_DATA_DIR: path.join(tempDir('baton-kill-ingest-'), 'data'),
      BATON_ADMIN_PASSWORD: ADMIN_PASSWORD,
      BATON_SANDBOX: 'off',
      BATON_EXECUTORS: '1',
    };
    const first = await serve(env);
    let runId: string;
    let seen: RunEvent[];
    try {
      const { token } = await login(first.base, 'admin', ADMIN_PASSWORD);
      const inv = await call(first, token!, 'POST', '/v1/inventories', { name: 'local', content: LOCAL_INVENTORY });
      const run = await call(first, token!, 'POST', '/v1/runs', {
        playbook: CHATTY_PLAYBOOK,
        inventory_id: inv.body.id,
      });
      expect(run.status).toBe(201);
      runId = run.body.id;
      // A live client: SSE publishes an event only once it is stored, so what it saw must survive the crash.
      const live = await openSse(`${first.base}/v1/runs/${runId}/stream`, { Authorization: `Bearer ${token!}` });
      expect(live.status).toBe(200);
      await live.until((st) => st.seqs().length >= 100, 'a hundred events on the live stream', 90_000);
      // Killed in the middle of the flood: ingest batches are being written as the signal lands.
      await first.kill();
      live.close();
      seen = live.frames
        .filter((f) => f.id !== undefined && f.data !== undefined)
        .map((f) => JSON.parse(f.data!) as RunEvent);
      expect(seen.map((e) => e.seq)).toEqual(seen.map((_, i) => i + 1));
    } finally {
      await first.kill();
    }

    const second = await serve(env);
    try {
      const { token } = await login(second.base, 'admin', ADMIN_PASSWORD);
      const run = await finishedRun(second, token!, runId);
      expect(run).toMatchObject({ status: 'finished', conclusion: 'error', reason: 'worker_lost' });
      const stored = await allEvents(second, token!, runId);
      expectGapFreeAndFinal(stored, run);
      expect(stored[stored.length - 1]!.data).toMatchObject({ reason: 'worker_lost' });
      expect(run.last_seq).toBe(stored.length);
      // Every event the live client saw is stored, unchanged.
      expect(stored.length).toBeGreaterThan(seen.length);
      expect(stored.slice(0, seen.length)).toEqual(seen);

      // The client reconnects with the last id it had: the rest arrives once, in order, then the end.
      const resumed = await openSse(`${second.base}/v1/runs/${runId}/stream`, {
        Authorization: `Bearer ${token!}`,
        'Last-Event-ID': String(seen[seen.length - 1]!.seq),
      });
      await resumed.until((st) => st.ended(), 'the resumed stream to end', 30_000);
      const rest = resumed.seqs();
      expect([...seen.map((e) => e.seq), ...rest]).toEqual(stored.map((e) => e.seq));
      expect(resumed.frames.filter((f) => f.event === 'end')).toHaveLength(1);

      // The server goes on: the next run succeeds.
      const inv = (await call<Array<{ id: string }>>(second, token!, 'GET', '/v1/inventories')).body[0]!;
      const next = await call(second, token!, 'POST', '/v1/runs', {
        playbook: '- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.debug: {msg: after}\n',
        inventory_id: inv.id,
      });
      expect(await finishedRun(second, token!, next.body.id)).toMatchObject({ conclusion: 'succeeded' });
    } finally {
      await second.stop();
    }
  }, 240_000);
});
