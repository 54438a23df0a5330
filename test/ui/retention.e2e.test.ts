// Retention in the web UI against a real `baton serve`: a run whose log and events `baton prune` removed shows, in
// place of an empty log, that retention removed them and when, while its outcome and hosts stay; a recent run's page
// still shows its log.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import type { Run } from '@baton/contracts';
import { openDatabase } from '@baton/db';
import { run, waitFor } from '../support/baton-process.js';
import { call, setupUi, signIn, ADMIN_PASSWORD, visited, withPage } from './support/browser.js';

const dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'baton-ui-retention-')), 'data');
const { ui, browser } = setupUi({ env: { BATON_DATA_DIR: dataDir } });

afterAll(() => fs.rmSync(path.dirname(dataDir), { recursive: true, force: true }));

const PLAYBOOK = `- hosts: all
  gather_facts: false
  tasks:
    - name: greet
      ansible.builtin.debug:
        msg: "hello from the retention test"
`;
const INVENTORY = 'localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n';

async function finishedRun(): Promise<Run> {
  const submitted = await call<Run>(ui(), ui().adminToken, 'POST', '/v1/runs', {
    playbook: PLAYBOOK,
    inventory: INVENTORY,
  });
  expect(submitted.status).toBe(201);
  return waitFor(
    'the run to finish',
    async () => {
      const r = await call<Run>(ui(), ui().adminToken, 'GET', `/v1/runs/${submitted.body.id}`);
      return r.body.status === 'finished' ? r.body : undefined;
    },
    180_000,
  );
}

describe('run page after retention', () => {
  it('says the log and events were removed by retention, and when, instead of an empty log', async () => {
    const old = await finishedRun();
    const recent = await finishedRun();
    // Age the first run: it finished long ago, as far as retention can tell.
    const db = openDatabase(`sqlite:${path.join(dataDir, 'baton.db')}`);
    try {
      await db.kysely
        .updateTable('runs')
        .set({ finished_at: '2020-01-01T00:00:00.000Z' })
        .where('id', '=', old.id)
        .execute();
    } finally {
      await db.close();
    }
    const pruned = await run(['prune', '--days', '30'], { BATON_DATA_DIR: dataDir });
    expect({ code: pruned.code, stderr: pruned.stderr }).toEqual({ code: 0, stderr: '' });
    expect(pruned.stdout).toContain('Removed the log and events of 1 run(s)');
    const after = await call<Run>(ui(), ui().adminToken, 'GET', `/v1/runs/${old.id}`);
    expect(after.body.output_pruned_at).toEqual(expect.any(String));

    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/runs/${old.id}`);
      const notice = page.getByTestId('output-pruned');
      await notice.waitFor();
      await expect(notice.textContent()).resolves.toContain('Log and events removed by retention');
      await expect(notice.textContent()).resolves.toContain('removed by retention on');
      const when = await notice.locator('time').getAttribute('datetime');
      expect(when).toBe(after.body.output_pruned_at);
      // No empty log viewer in its place; the hosts are still listed.
      await expect(page.getByText('hello from the retention test').count()).resolves.toBe(0);
      await expect(page.getByText('localhost').first().isVisible()).resolves.toBe(true);
      await visited(page, 'retention-run-pruned');

      await page.goto(`${ui().base}/ui/runs/${recent.id}`);
      await page.getByText('hello from the retention test').first().waitFor();
      await expect(page.getByTestId('output-pruned').count()).resolves.toBe(0);
    });
  }, 400_000);
});
