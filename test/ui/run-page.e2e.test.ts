// The run page in a real browser against a real `baton serve` with real ansible: the log arriving live and
// resuming after a dropped connection without a gap or a duplicate, line links, search, the raw download, cancel,
// retrying the failed shards of a split, rejecting a held run with a comment, and a viewer without buttons.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Run } from '@baton/contracts';
import type { Page, Route } from 'playwright-core';
import { tempDir, waitFor } from '../support/baton-process.js';
import {
  ADMIN_PASSWORD,
  call,
  createUser,
  localInventory,
  openPage,
  setupUi,
  signIn,
  visited,
  withPage,
} from './support/browser.js';

// Unsandboxed, so the gate files the playbooks wait for are visible to them (the sandbox has a private /tmp).
const { ui, browser } = setupUi({ env: { BATON_SANDBOX: 'off' } });
let inventory: string;
let gates: string;

beforeAll(async () => {
  inventory = await localInventory(ui());
  gates = tempDir('baton-ui-run-page-');
}, 90_000);

const ESCAPES = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]`, 'g');
const linesOf = (text: string) => {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
};

async function submit(body: Record<string, unknown>, token = ui().adminToken): Promise<Run> {
  const r = await call<Run>(ui(), token, 'POST', '/v1/runs', { inventory_id: inventory, ...body });
  if (r.status !== 201) throw new Error(`submit: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

async function logText(id: string): Promise<string> {
  const res = await fetch(`${ui().base}/v1/runs/${id}/logs`, {
    headers: { Authorization: `Bearer ${ui().adminToken}` },
  });
  expect(res.status).toBe(200);
  return res.text();
}

async function finished(id: string): Promise<Run> {
  return waitFor(`run ${id} to finish`, async () => {
    const r = await call<Run>(ui(), ui().adminToken, 'GET', `/v1/runs/${id}`);
    return r.body.status === 'finished' ? r.body : undefined;
  });
}

/** The header's status badge. */
const headerStatus = (page: Page) => page.locator('.page-header [data-status]').first();

/**
 * Every line the log view shows, by its number, read by scrolling the virtualized list from top to bottom (only
 * the rows on screen exist). A number shown with two different texts comes back as a conflict.
 */
async function displayedLog(page: Page): Promise<Record<string, string>> {
  return page.evaluate(async () => {
    const el = document.querySelector<HTMLElement>('[data-testid="log"]')!;
    const seen: Record<string, string> = {};
    const settle = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    el.scrollTop = 0;
    await settle();
    for (;;) {
      for (const row of Array.from(el.querySelectorAll<HTMLElement>('[data-line]'))) {
        const n = row.dataset.line!;
        const text = row.querySelector('.log-text')!.textContent ?? '';
        seen[n] = n in seen && seen[n] !== text ? `CONFLICT: ${seen[n]} / ${text}` : text;
      }
      if (el.scrollTop + el.clientHeight >= el.scrollHeight - 1) break;
      el.scrollTop += el.clientHeight - 40;
      await settle();
    }
    return seen;
  });
}

/** The page shows exactly lines 1..N of the stored log, each once, with the stored text (colours rendered away). */
async function expectWholeLog(page: Page, id: string): Promise<string[]> {
  const stored = linesOf(await logText(id)).map((l) => l.replace(ESCAPES, ''));
  const shown = await displayedLog(page);
  expect(
    Object.keys(shown)
      .map(Number)
      .sort((a, b) => a - b),
  ).toEqual(stored.map((_, i) => i + 1));
  expect(stored.map((_, i) => shown[String(i + 1)])).toEqual(stored);
  return stored;
}

const gatedPlaybook = (gate1: string, gate2: string) => `- hosts: alpha
  gather_facts: false
  tasks:
    - ansible.builtin.debug: { msg: "before the first gate" }
    - ansible.builtin.wait_for: { path: "${gate1}", timeout: 300 }
    - ansible.builtin.debug: { msg: "between the gates {{ item }}" }
      loop: [1, 2, 3, 4, 5]
    - ansible.builtin.wait_for: { path: "${gate2}", timeout: 300 }
    - ansible.builtin.debug: { msg: "after the second gate {{ item }}" }
      loop: [1, 2, 3]
`;

describe('the run page', () => {
  let liveRun: string;

  it('shows the log arriving live and resumes a dropped stream without a gap or a duplicate line', async () => {
    const gate1 = path.join(gates, 'live-1');
    const gate2 = path.join(gates, 'live-2');
    const run = await submit({ playbook: gatedPlaybook(gate1, gate2) });
    liveRun = run.id;
    // The page opens while the run waits at the first gate, with its first lines stored.
    await waitFor('the run to wait at the first gate', async () =>
      (await logText(run.id)).includes('wait_for') ? true : undefined,
    );

    const { page, problems, close } = await openPage(browser());
    try {
      // The first stream connection is cut after the first chunk printed between the gates (with the start of the
      // next frame, if one came, left half-sent); the page must reconnect with the last whole event's id.
      const streamIds: Array<string | undefined> = [];
      let lastWholeId: string | undefined;
      let cut = false;
      await page.route(`**/v1/runs/${run.id}/stream`, async (route: Route) => {
        const headers = route.request().headers();
        streamIds.push(headers['last-event-id']);
        if (cut) return route.continue();
        cut = true;
        const abort = new AbortController();
        try {
          const upstream = await fetch(`${ui().base}/v1/runs/${run.id}/stream`, {
            headers: { authorization: headers.authorization!, 'last-event-id': headers['last-event-id'] ?? '0' },
            signal: abort.signal,
          });
          const reader = upstream.body!.pipeThrough(new TextDecoderStream()).getReader();
          let buffer = '';
          let body = '';
          for (;;) {
            const { value, done } = await reader.read();
            if (done) throw new Error('the run ended before the stream was cut');
            buffer += value;
            const frames = buffer.split('\n\n');
            const whole = frames.slice(0, -1);
            const at = whole.findIndex((f) => f.includes('event: log') && f.includes('between the gates'));
            if (at < 0) continue;
            body = whole
              .slice(0, at + 1)
              .map((f) => `${f}\n\n`)
              .join('');
            lastWholeId = /^id: (\d+)$/m.exec(whole[at]!)?.[1];
            // The start of the next frame, if one came, without its end: the page must drop it, not show it.
            const next = buffer.slice(body.length).split('\n\n')[0]!;
            body += next.slice(0, Math.floor(next.length / 2));
            break;
          }
          abort.abort();
          await route.fulfill({ status: 200, headers: { 'content-type': 'text/event-stream' }, body });
        } catch {
          // The test failed elsewhere (the server stopped under the read): the page's request just fails.
          abort.abort();
          await route.abort().catch(() => undefined);
        }
      });

      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/runs/${run.id}`);
      await page.getByRole('heading', { name: new RegExp(run.id) }).waitFor();
      const log = page.getByTestId('log');
      await log.getByText('before the first gate').waitFor();
      expect(await log.getByText('between the gates').count()).toBe(0);
      await headerStatus(page).and(page.locator('[data-status="running"]')).waitFor();
      await visited(page, 'run-page-live');

      // Lines printed while the page is open appear without a reload, through the cut and the resumed stream.
      fs.writeFileSync(gate1, '');
      await log.getByText('between the gates 5').waitFor();
      expect(await headerStatus(page).getAttribute('data-status')).toBe('running');
      // The five lines may come in one log event, before the cut: the page reconnects after it either way.
      await waitFor('the page to open the stream again', async () => (streamIds.length >= 2 ? true : undefined));
      expect(lastWholeId).toBeDefined();
      expect(streamIds[1]).toBe(lastWholeId);
      await expectWholeLog(page, run.id);

      fs.writeFileSync(gate2, '');
      await log.getByText('after the second gate 3').waitFor();
      await headerStatus(page).and(page.locator('[data-status="succeeded"]')).waitFor();
      await page.getByTestId('log-state').getByText('Complete').waitFor();
      // The host table came with the final status event.
      await page.getByRole('table', { name: 'Per-host outcomes' }).getByRole('rowheader', { name: 'alpha' }).waitFor();
      const stored = await expectWholeLog(page, run.id);
      expect(stored.filter((l) => l.includes('after the second gate')).length).toBe(3);
      await visited(page, 'run-page-finished');
      expect(problems).toEqual([]);
    } finally {
      await close();
      // A failed test leaves no run waiting at a gate.
      for (const gate of [gate1, gate2]) if (!fs.existsSync(gate)) fs.writeFileSync(gate, '');
    }
  }, 120_000);

  it('highlights a linked line, finds text in the log and downloads the raw log with the token kept out of URLs', async () => {
    const { page, problems, close } = await openPage(browser());
    try {
      const urls: string[] = [];
      page.on('request', (r) => urls.push(r.url()));
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      const raw = await logText(liveRun);
      const stored = linesOf(raw).map((l) => l.replace(ESCAPES, ''));

      await page.goto(`${ui().base}/ui/runs/${liveRun}#L5`);
      const line5 = page.locator('[data-line="5"]');
      await line5.and(page.locator('.log-line-target')).waitFor();
      expect(await line5.locator('.log-text').textContent()).toBe(stored[4]);
      await visited(page, 'run-page-line-link');
      // A line number is a link to the line.
      await page.getByRole('link', { name: 'Line 7', exact: true }).click();
      expect(new URL(page.url()).hash).toBe('#L7');
      await page.locator('[data-line="7"].log-line-target').waitFor();

      const needle = 'between the gates';
      const expected = stored.flatMap((l, i) => (l.toLowerCase().includes(needle) ? [i + 1] : []));
      expect(expected.length).toBeGreaterThanOrEqual(5);
      await page.getByRole('searchbox', { name: 'Search the log' }).fill(needle);
      await page.getByTestId('search-count').getByText(`${expected.length} matches`, { exact: true }).waitFor();
      await page.getByRole('button', { name: 'Next match' }).click();
      await page.getByTestId('search-count').getByText(`1 of ${expected.length} matches`).waitFor();
      await page.locator(`[data-line="${expected[0]}"].log-line-current`).waitFor();
      await page.getByRole('button', { name: 'Previous match' }).click();
      await page.locator(`[data-line="${expected[expected.length - 1]}"].log-line-current`).waitFor();
      await visited(page, 'run-page-search');

      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Download raw log' }).click(),
      ]);
      expect(download.suggestedFilename()).toBe(`${liveRun}.log`);
      expect(fs.readFileSync((await download.path())!, 'utf8')).toBe(raw);
      const token = await page.evaluate(() => sessionStorage.getItem('baton.token'));
      expect(urls.filter((u) => u.includes(token!))).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  }, 60_000);

  it('renders ANSI colours in the log as styled text, not escape codes', async () => {
    // Ansible prints a task's name as written; YAML's "\\e" is the escape character, so this banner carries colour.
    const run = await submit({
      limit: 'alpha',
      playbook:
        '- hosts: alpha\n  gather_facts: false\n  tasks:\n    - name: "\\e[1;31mred alert\\e[0m plain"\n      ansible.builtin.ping:\n',
    });
    expect((await finished(run.id)).conclusion).toBe('succeeded');
    expect(await logText(run.id)).toContain(`${String.fromCharCode(27)}[1;31mred alert`);
    const { page, problems, close } = await openPage(browser());
    try {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/runs/${run.id}`);
      const coloured = page.getByTestId('log').locator('span.ansi-red-fg.ansi-bold', { hasText: 'red alert' });
      await coloured.waitFor();
      expect(await coloured.textContent()).toBe('red alert');
      // No escape character, nor its "[1;31m" remains, reaches the page.
      const shown = await page.getByTestId('log').textContent();
      expect(shown).not.toContain(String.fromCharCode(27));
      expect(shown).not.toContain('[1;31m');
      expect(shown).toContain('red alert plain');
      await visited(page, 'run-page-ansi');
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });

  it('cancels a running run after confirming', async () => {
    const gate = path.join(gates, 'never');
    const run = await submit({
      playbook: `- hosts: alpha\n  gather_facts: false\n  tasks:\n    - ansible.builtin.wait_for: { path: "${gate}", timeout: 300 }\n`,
    });
    const { page, problems, close } = await openPage(browser());
    try {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/runs/${run.id}`);
      await headerStatus(page).and(page.locator('[data-status="running"]')).waitFor();
      await page.getByRole('button', { name: 'Cancel', exact: true }).click();
      const dialog = page.getByRole('dialog', { name: 'Cancel this run?' });
      await dialog.waitFor();
      await visited(page, 'run-page-cancel-confirm');
      await dialog.getByRole('button', { name: 'Cancel run' }).click();
      await headerStatus(page).and(page.locator('[data-status="canceled"]')).waitFor();
      expect((await finished(run.id)).conclusion).toBe('canceled');
      // Nothing left to cancel.
      expect(await page.getByRole('button', { name: 'Cancel', exact: true }).count()).toBe(0);
      await visited(page, 'run-page-canceled');
      expect(problems).toEqual([]);
    } finally {
      await close();
      if (!fs.existsSync(gate)) fs.writeFileSync(gate, '');
    }
  }, 90_000);

  let failedSplit: string;

  it('shows a split with its failed host and retries only the failed shard', async () => {
    const split = await submit({
      shards: 2,
      playbook: `- hosts: all
  gather_facts: false
  tasks:
    - ansible.builtin.debug: { msg: "hello from {{ inventory_hostname }}" }
    - ansible.builtin.fail: { msg: "beta is broken" }
      when: inventory_hostname == 'beta'
`,
    });
    failedSplit = split.id;
    expect((await finished(split.id)).conclusion).toBe('failed');
    const { page, problems, close } = await openPage(browser());
    try {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/runs/${split.id}`);
      const shards = page.getByRole('table', { name: 'Shards' });
      await shards.locator('tbody tr').nth(1).waitFor();
      expect(await shards.locator('tbody tr').count()).toBe(2);
      await shards.locator('[data-status="failed"]').waitFor();
      await shards.locator('[data-status="succeeded"]').waitFor();
      const hosts = page.getByRole('table', { name: 'Per-host outcomes' });
      await hosts.locator('tr[data-host="beta"] [data-outcome="failed"]').waitFor();
      await hosts.locator('tr[data-host="alpha"] [data-outcome="ok"]').waitFor();
      // The failed task of beta with ansible's message, read from the shard that ran beta.
      const failures = page.getByRole('region', { name: 'Failures on beta' });
      await failures.getByText('beta is broken').waitFor();
      expect(await page.getByRole('region', { name: 'Failures on alpha' }).count()).toBe(0);
      await visited(page, 'run-page-split-failed');

      await page.getByRole('button', { name: 'Retry failed shards' }).click();
      await page.waitForURL((u) => /\/ui\/runs\/run_/.test(u.pathname) && !u.pathname.endsWith(split.id));
      const retryId = new URL(page.url()).pathname.split('/').pop()!;
      await page.getByRole('heading', { name: new RegExp(retryId) }).waitFor();
      await page.getByRole('link', { name: split.id }).waitFor();
      const retryShards = page.getByRole('table', { name: 'Shards' });
      await retryShards.locator('tbody tr').first().waitFor();
      expect(await retryShards.locator('tbody tr').count()).toBe(1);
      expect(await retryShards.locator('tbody tr td.mono').last().textContent()).toBe('beta');
      const retry = (await call<Run>(ui(), ui().adminToken, 'GET', `/v1/runs/${retryId}`)).body;
      expect(retry).toMatchObject({ kind: 'split', retry_of: split.id, shard_count: 1, hosts: ['beta'] });
      await finished(retryId);
      await visited(page, 'run-page-split-retry');
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  }, 120_000);

  let viewerHeld: string;

  it('rejects a held run with a comment as a second user; its submitter may reject but never approve', async () => {
    const policy = await call<{ id: string }>(ui(), ui().adminToken, 'POST', '/v1/policies', {
      name: 'approval-test runs',
      match: { labels: ['approval-test'] },
      approvers: { roles: ['operator'] },
      min_approvals: 1,
      expires_after_s: 3600,
    });
    expect(policy.status).toBe(201);
    const carol = await createUser(ui(), 'carol', 'operator');
    const held = await submit({
      labels: ['approval-test'],
      playbook: '- hosts: all\n  gather_facts: false\n  tasks: []\n',
    });
    expect(held.status).toBe('held');
    viewerHeld = (
      await submit({ labels: ['approval-test'], playbook: '- hosts: all\n  gather_facts: false\n  tasks: []\n' })
    ).id;

    const submitter = await openPage(browser());
    try {
      await signIn(submitter.page, ui().base, 'admin', ADMIN_PASSWORD);
      await submitter.page.goto(`${ui().base}/ui/runs/${held.id}`);
      await submitter.page.getByRole('heading', { name: 'Awaiting approval' }).waitFor();
      await submitter.page.getByRole('button', { name: 'Reject' }).waitFor();
      expect(await submitter.page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
      expect(submitter.problems).toEqual([]);
    } finally {
      await submitter.close();
    }

    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'carol', carol.password);
      await page.goto(`${ui().base}/ui/runs/${held.id}`);
      const hold = page.getByRole('region', { name: 'Awaiting approval' });
      await hold.getByText('approval-test runs').waitFor();
      await hold.getByText('0 of 1').waitFor();
      await page.getByRole('button', { name: 'Approve' }).waitFor();
      // carol may decide but holds no use on the run's inventory: canceling is not hers to do.
      await page.getByRole('heading', { name: 'Events' }).waitFor();
      expect(await page.getByRole('button', { name: 'Cancel', exact: true }).count()).toBe(0);
      await visited(page, 'run-page-held');
      await page.getByLabel('Comment').fill('not during the freeze');
      await page.getByRole('button', { name: 'Reject', exact: true }).click();
      const dialog = page.getByRole('dialog', { name: 'Reject this run?' });
      await dialog.getByText('not during the freeze').waitFor();
      await dialog.getByRole('button', { name: 'Reject run' }).click();
      await headerStatus(page).and(page.locator('[data-status="rejected"]')).waitFor();
      const decisions = page.getByRole('list', { name: 'Decisions' });
      await decisions.getByText('carol').waitFor();
      await decisions.getByText('not during the freeze').waitFor();
      expect(await page.getByRole('button', { name: /Approve|Reject/ }).count()).toBe(0);
      const after = (await call<Run>(ui(), ui().adminToken, 'GET', `/v1/runs/${held.id}`)).body;
      expect(after).toMatchObject({ status: 'finished', conclusion: 'rejected' });
      expect(after.approvals).toEqual([
        expect.objectContaining({ username: 'carol', decision: 'reject', comment: 'not during the freeze' }),
      ]);
      await visited(page, 'run-page-rejected');
    });
  }, 90_000);

  it('shows a viewer the run but no action buttons', async () => {
    const vic = await createUser(ui(), 'vic', 'viewer');
    const grant = await call(ui(), ui().adminToken, 'POST', '/v1/grants', {
      subject: vic.id,
      object: inventory,
      level: 'use',
    });
    expect(grant.status).toBe(201);
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'vic', vic.password);
      // A failed split (an operator could retry it) and a held run (an approver could decide on it).
      for (const id of [failedSplit, viewerHeld]) {
        await page.goto(`${ui().base}/ui/runs/${id}`);
        await page.getByRole('heading', { name: new RegExp(id) }).waitFor();
        await page.getByRole('heading', { name: 'Events' }).waitFor();
        expect(await page.getByTestId('run-actions').count()).toBe(0);
        expect(
          await page.getByRole('button', { name: /^(Cancel|Retry|Retry failed shards|Approve|Reject)$/ }).count(),
        ).toBe(0);
      }
      await page.getByRole('heading', { name: 'Awaiting approval' }).waitFor();
      await visited(page, 'run-page-viewer');
    });
  }, 60_000);
});
