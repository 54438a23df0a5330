// The advisory AI helpers in a real browser against a real `baton serve` running real ansible, with a local server
// speaking the OpenAI protocol as the provider: everything hidden before an admin configures it on the settings
// page (the key never shown back); a failed run explained with a citation that jumps the log to its line; a question
// about the fleet answered with links; the provider's failure and the ask limit as readable messages; a drafted
// script with what its checks found; a proposal refused with reasons, then one held, explained to its approver and
// approved by an admin from the run page.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AiSettings, Run } from '@baton/contracts';
import { createRepo } from '@baton/executor/testing';
import type { Page } from 'playwright-core';
import { type FakeAiProvider, startFakeAiProvider } from '../../apps/api/src/testing/ai-fake-provider.js';
import { tempDir, waitFor } from '../support/baton-process.js';
import {
  ADMIN_PASSWORD,
  call,
  createUser,
  localInventory,
  openPage,
  setupUi,
  signIn,
  tokenFor,
  visited,
  withPage,
} from './support/browser.js';

// Two questions a minute per user: the third is refused (429) within the test.
const { ui, browser } = setupUi({ env: { BATON_SANDBOX: 'off', BATON_AI_ASK_RATE: '2' } });

// Many lines before the failure: the cited line is far below the log view's first screen.
const SITE = `- hosts: all
  gather_facts: false
  tasks:
    - name: list the volumes
      ansible.builtin.debug:
        msg: "volume {{ item }}"
      loop: "{{ range(60) | list }}"
    - name: mount data volume
      ansible.builtin.fail:
        msg: "cannot mount /data on {{ inventory_hostname }}"
      when: inventory_hostname == 'beta'
`;
const PING = '- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.ping:\n';
const API_KEY = 'sk-ui-test-key-never-shown-5e1f';

let fake: FakeAiProvider;
let project: string;
let inventory: string;
let operator: { id: string; password: string; token: string };
let failedRun: Run;

async function finished(id: string): Promise<Run> {
  return waitFor(
    `run ${id} to finish`,
    async () => {
      const r = await call<Run>(ui(), ui().adminToken, 'GET', `/v1/runs/${id}`);
      return r.body.status === 'finished' ? r.body : undefined;
    },
    180_000,
  );
}

/** Signs in and opens `path` once the AI status has been read (so what it hides is already hidden). */
async function open(page: Page, who: { username: string; password: string }, to: string): Promise<void> {
  await signIn(page, ui().base, who.username, who.password);
  const status = page.waitForResponse((r) => r.url().endsWith('/v1/ai/status'));
  await page.goto(`${ui().base}/ui${to}`);
  await status;
}

const ADMIN = { username: 'admin', password: ADMIN_PASSWORD };
const OPERATOR = () => ({ username: 'olga', password: operator.password });
const nav = (page: Page) => page.getByRole('navigation', { name: 'Main' });

beforeAll(async () => {
  fake = await startFakeAiProvider();
  const repo = createRepo(tempDir('baton-ui-ai-'));
  fs.writeFileSync(path.join(repo.dir, 'site.yml'), SITE);
  fs.writeFileSync(path.join(repo.dir, 'ping.yml'), PING);
  repo.git('add', '-A');
  repo.git('commit', '-q', '-m', 'site');
  const prj = await call<{ id: string }>(ui(), ui().adminToken, 'POST', '/v1/projects', {
    name: 'site',
    git_url: repo.url,
  });
  expect(prj.status).toBe(201);
  project = prj.body.id;
  inventory = await localInventory(ui(), 'two hosts', ['alpha', 'beta']);
  const olga = await createUser(ui(), 'olga', 'operator');
  operator = { ...olga, token: await tokenFor(ui(), 'olga', olga.password) };
  for (const object of [project, inventory]) {
    const g = await call(ui(), ui().adminToken, 'POST', '/v1/grants', { subject: olga.id, object, level: 'use' });
    expect(g.status).toBe(201);
  }
  const submitted = await call<Run>(ui(), operator.token, 'POST', '/v1/runs', {
    project_id: project,
    playbook: 'site.yml',
    inventory_id: inventory,
  });
  expect(submitted.status).toBe(201);
  failedRun = await finished(submitted.body.id);
  expect(failedRun.conclusion).toBe('failed');
}, 240_000);

afterAll(async () => {
  await fake?.close();
});

describe('the AI helpers in the browser', () => {
  it('are hidden before a provider is configured: no Explain, no Ask, no AI nav but the admin’s settings', async () => {
    await withPage(browser(), async (page) => {
      await open(page, OPERATOR(), `/runs/${failedRun.id}`);
      await page.getByRole('heading', { name: 'Log' }).waitFor();
      expect(await page.getByRole('button', { name: 'Explain this run' }).count()).toBe(0);
      expect(await nav(page).getByRole('heading', { name: 'AI' }).count()).toBe(0);
      await page.goto(`${ui().base}/ui/fleet`);
      await page.getByRole('table', { name: 'Hosts, most failures first' }).getByText('beta').waitFor();
      expect(await page.getByRole('heading', { name: 'Ask about the fleet' }).count()).toBe(0);
      // A bookmark to an AI page says why there is nothing to do.
      await page.goto(`${ui().base}/ui/ai/draft`);
      await page.getByText('The AI helpers are not configured').waitFor();
      await visited(page, 'ai-not-configured');
    });
    await withPage(browser(), async (page) => {
      await open(page, ADMIN, '/runs');
      await nav(page).getByRole('link', { name: 'AI settings' }).waitFor();
      expect(
        await nav(page)
          .getByRole('link', { name: /Draft a script|Propose a run/ })
          .count(),
      ).toBe(0);
    });
    expect(fake.requests).toHaveLength(0);
  });

  it('an admin configures the provider on the settings page; the key is never shown back', async () => {
    await withPage(browser(), async (page) => {
      await open(page, ADMIN, '/runs');
      await nav(page).getByRole('link', { name: 'AI settings' }).click();
      await page.getByRole('heading', { name: 'AI settings' }).waitFor();
      await visited(page, 'ai-settings-empty');
      await page.getByLabel('Protocol').selectOption('openai');
      await page.getByLabel('Base URL').fill(`${fake.url}/v1`);
      await page.getByLabel('Model').fill('ui-test-model');
      await page.getByLabel('API key').fill(API_KEY);
      await page.getByLabel('Timeout (seconds)').fill('10');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
      await page.getByText('stored (never shown)').waitFor();
      // The field empties once stored; nothing on the page holds the key.
      expect(await page.getByLabel('API key').inputValue()).toBe('');
      expect(await page.content()).not.toContain(API_KEY);
      // The AI entries appear at once.
      await nav(page).getByRole('link', { name: 'Draft a script' }).waitFor();
      await nav(page).getByRole('link', { name: 'Propose a run' }).waitFor();
      await visited(page, 'ai-settings-stored');
    });
    const stored = await call<AiSettings>(ui(), ui().adminToken, 'GET', '/v1/settings/ai');
    expect(stored.body).toMatchObject({
      configured: true,
      source: 'settings',
      provider: 'openai',
      base_url: `${fake.url}/v1`,
      model: 'ui-test-model',
      api_key_set: true,
      timeout_s: 10,
    });
  });

  it('explains the failed run; a cited event jumps the log to its line; a provider failure reads plainly', async () => {
    const events = await call<Array<{ seq: number }>>(
      ui(),
      operator.token,
      'GET',
      `/v1/runs/${failedRun.id}/events?kind=runner_on_failed`,
    );
    const failedSeq = events.body[0]!.seq;
    fake.next({
      answer: {
        summary: 'beta could not mount /data.',
        likely_causes: ['the data volume is not attached to beta'],
        suggested_fixes: ['attach the volume, then retry on beta'],
        cited_events: [failedSeq],
      },
    });
    const { page, problems, close } = await openPage(browser());
    try {
      await open(page, OPERATOR(), `/runs/${failedRun.id}`);
      await page.getByRole('button', { name: 'Explain this run' }).click();
      const panel = page.getByTestId('ai-explain');
      await panel.getByTestId('ai-summary').getByText('beta could not mount /data.').waitFor();
      await panel.getByText('the data volume is not attached to beta').waitFor();
      await panel.getByText('attach the volume, then retry on beta').waitFor();
      await panel.getByText(/Advisory/).waitFor();
      await panel
        .getByTestId('ai-meta')
        .getByText(/fresh · /)
        .waitFor();
      const cited = panel.getByRole('link', { name: new RegExp(`^Event ${failedSeq}: lines? \\d+`) });
      const line = Number(/lines? (\d+)/.exec((await cited.textContent())!)![1]);
      expect(line).toBeGreaterThan(100);
      await visited(page, 'ai-explained');
      await cited.click();
      // The log view scrolled to the line and marks it; the line is the failure.
      const row = page.locator(`[data-testid="log"] [data-line="${line}"]`);
      await row.and(page.locator('.log-line-target')).waitFor();
      expect(new URL(page.url()).hash).toBe(`#L${line}`);
      const [rowBox, logBox] = [await row.boundingBox(), await page.getByTestId('log').boundingBox()];
      expect(rowBox!.y).toBeGreaterThanOrEqual(logBox!.y);
      expect(rowBox!.y + rowBox!.height).toBeLessThanOrEqual(logBox!.y + logBox!.height);
      const failure = page.locator('[data-testid="log"] [data-line]').filter({ hasText: 'cannot mount /data on beta' });
      expect(await failure.count()).toBeGreaterThan(0);

      // Refresh asks the provider again: it fails, and the page says so in the API's words.
      fake.next({ status: 500 });
      await panel.getByRole('button', { name: 'Refresh' }).click();
      const alert = panel.getByRole('alert');
      await alert.getByText('The AI provider failed').waitFor();
      await alert.getByText('The provider answered HTTP 500.').waitFor();
      await visited(page, 'ai-explain-failed');
      // The only problems: the 502 itself, as the response and the browser's console line about it.
      expect(problems.filter((p) => !/502/.test(p))).toEqual([]);
    } finally {
      await close();
    }
    // Opened again, the stored explanation answers without asking the provider.
    const before = fake.requests.length;
    await withPage(browser(), async (page) => {
      await open(page, OPERATOR(), `/runs/${failedRun.id}`);
      await page.getByRole('button', { name: 'Explain this run' }).click();
      await page
        .getByTestId('ai-meta')
        .getByText(/cached · /)
        .waitFor();
    });
    expect(fake.requests).toHaveLength(before);
  });

  it('answers a question on the fleet page with links to its sources, then says when to ask again', async () => {
    fake.next({
      answer: {
        answer: 'beta keeps failing: it cannot mount /data.',
        citations: [
          { kind: 'run', id: failedRun.id },
          { kind: 'host', id: 'beta' },
        ],
      },
    });
    await withPage(browser(), async (page) => {
      await open(page, OPERATOR(), '/fleet');
      const box = page.getByTestId('ai-ask');
      await box.getByLabel('Question').fill('Which hosts keep failing?');
      await box.getByRole('button', { name: 'Ask' }).click();
      await box.getByText('beta keeps failing: it cannot mount /data.').waitFor();
      const sources = box.getByRole('list', { name: 'Sources' });
      expect(await sources.getByRole('link', { name: failedRun.id }).getAttribute('href')).toBe(
        `/ui/runs/${failedRun.id}`,
      );
      expect(await sources.getByRole('link', { name: 'beta' }).getAttribute('href')).toBe('/ui/hosts/beta');
      await visited(page, 'ai-fleet-answer');
      expect(fake.requests.at(-1)!.raw).toContain('Which hosts keep failing?');
      await sources.getByRole('link', { name: failedRun.id }).click();
      await page.getByRole('heading', { name: `Run ${failedRun.id}` }).waitFor();

      // Two questions a minute: the second is answered, the third refused with when to ask again.
      await page.goBack();
      fake.next({ answer: { answer: 'Nothing else stands out.', citations: [] } });
      await box.getByLabel('Question').fill('Anything else?');
      await box.getByRole('button', { name: 'Ask' }).click();
      await box.getByText('Nothing else stands out.').waitFor();
      await box.getByLabel('Question').fill('And now?');
      await box.getByRole('button', { name: 'Ask' }).click();
      const alert = box.getByRole('alert');
      await alert.getByText('Too many questions', { exact: true }).waitFor();
      await alert.getByText(/ask again in \d+ s/).waitFor();
      await visited(page, 'ai-fleet-rate-limited');
    });
  });

  it('drafts a script: shown with a copy button, the model’s notes and what the checks found', async () => {
    fake.next({ answer: { script: '#!/usr/bin/env bash\nif [ -f /data/ready ; then\n', notes: 'Run it as root.' } });
    await withPage(browser(), async (page) => {
      await open(page, OPERATOR(), '/runs');
      await nav(page).getByRole('link', { name: 'Draft a script' }).click();
      await page.getByLabel('What should the script do?').fill('Wait until /data is ready');
      await page.getByLabel('Language').selectOption('bash');
      await page.getByLabel('Context (optional)').fill('Debian 12');
      await page.getByRole('button', { name: 'Draft', exact: true }).click();
      const draft = page.getByTestId('ai-draft');
      await draft.getByTestId('ai-script').getByText('if [ -f /data/ready ; then').waitFor();
      await draft.getByRole('button', { name: 'Copy script' }).waitFor();
      await draft.getByText('Run it as root.').waitFor();
      expect(((await draft.getByTestId('ai-warnings').textContent()) ?? '').length).toBeGreaterThan(25);
      await visited(page, 'ai-draft');
    });
    expect(fake.requests.at(-1)!.raw).toContain('Debian 12');
  });

  it('proposes a run: refused with reasons, then held; its approver reads why and approves it', async () => {
    const proposal = (over: Record<string, unknown>) => ({
      answer: {
        project_id: project,
        playbook: 'ping.yml',
        ref: null,
        inventory_id: inventory,
        limit: 'alpha',
        extra_vars: null,
        check: false,
        rationale: 'Pings alpha, the host the request names.',
        ...over,
      },
    });
    const runsBefore = (await call<Run[]>(ui(), ui().adminToken, 'GET', '/v1/runs?limit=200')).body.length;
    let heldId = '';
    await withPage(browser(), async (page) => {
      await open(page, OPERATOR(), '/runs');
      await nav(page).getByRole('link', { name: 'Propose a run' }).click();
      fake.next(proposal({ playbook: 'wipe.yml' }));
      await page.getByLabel('What should run?').fill('wipe alpha');
      await page.getByRole('button', { name: 'Propose' }).click();
      const refused = page.getByRole('alert').filter({ hasText: 'The proposed run cannot be submitted' });
      await refused.getByText('No run was created.').waitFor();
      expect(await refused.getByTestId('ai-reasons').locator('li').count()).toBeGreaterThan(0);
      await visited(page, 'ai-propose-refused');
      expect((await call<Run[]>(ui(), ui().adminToken, 'GET', '/v1/runs?limit=200')).body).toHaveLength(runsBefore);

      fake.next(proposal({}));
      await page.getByLabel('What should run?').fill('ping alpha please');
      await page.getByRole('button', { name: 'Propose' }).click();
      const proposed = page.getByTestId('ai-proposed');
      await proposed.getByTestId('ai-rationale').getByText('Pings alpha, the host the request names.').waitFor();
      await visited(page, 'ai-proposed');
      const link = proposed.getByRole('link', { name: /^run_/ });
      heldId = (await link.textContent())!;
      await link.click();
      // The proposer sees why, and may not approve her own proposal.
      const panel = page.getByTestId('ai-proposal');
      await panel.getByTestId('ai-request').getByText('ping alpha please').waitFor();
      await page.getByRole('heading', { name: 'Awaiting approval' }).waitFor();
      expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    });
    expect((await call<Run>(ui(), ui().adminToken, 'GET', `/v1/runs/${heldId}`)).body).toMatchObject({
      status: 'held',
      origin: 'ai',
      submitted_by: operator.id,
    });

    await withPage(browser(), async (page) => {
      await open(page, ADMIN, `/runs/${heldId}`);
      const panel = page.getByTestId('ai-proposal');
      await panel.getByTestId('ai-request').getByText('ping alpha please').waitFor();
      await panel.getByTestId('ai-rationale').getByText('Pings alpha, the host the request names.').waitFor();
      await visited(page, 'ai-proposal-approver');
      await page.getByRole('button', { name: 'Approve' }).click();
      await page
        .locator('.page-header [data-status]')
        .and(page.locator('[data-status="succeeded"]'))
        .waitFor({ timeout: 180_000 });
    });
    const done = await finished(heldId);
    expect(done).toMatchObject({ conclusion: 'succeeded', origin: 'ai', limit: 'alpha' });
    expect(done.approvals).toEqual([expect.objectContaining({ username: 'admin', decision: 'approve' })]);
  });
});
