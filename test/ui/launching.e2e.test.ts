// Launching from the web UI: templates through their survey, pipelines from the step editor, schedules with their
// next times, webhook triggers with their secret shown once, and a viewer who sees no buttons they cannot use.
// Real `baton serve` (embedded SQLite, real ansible), real chromium; every page visited is checked with axe-core.
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
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

const PLAYBOOK = `- hosts: all
  gather_facts: false
  tasks:
    - ansible.builtin.debug:
        msg: "region {{ region }} count {{ count }}"
`;
const PING = '- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.ping:\n';

interface Named {
  id: string;
  name: string;
}
interface RunView {
  id: string;
  kind: string;
  status: string;
  conclusion: string | null;
  step_name: string | null;
  extra_vars: Record<string, unknown> | null;
  survey_answers: Record<string, unknown> | null;
}

const { ui, browser } = setupUi();
let inventoryId: string;
let repoDir: string;

/** An admin API call that must succeed. */
async function api<T>(method: string, url: string, body?: unknown, token = ui().adminToken): Promise<T> {
  const r = await call<T>(ui(), token, method, url, body);
  if (r.status >= 300) throw new Error(`${method} ${url}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** A git repository with a playbook, for a trigger's project. */
function makeRepo(): string {
  const dir = path.join(tempDir('baton-ui-launch-repo'), 'repo');
  fs.mkdirSync(dir, { recursive: true });
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: dir });
  git('init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(dir, 'site.yml'), PING);
  git('add', 'site.yml');
  git('commit', '-q', '-m', 'site');
  return dir;
}

/** The messages shown next to the field with this API path. */
const fieldErrors = (page: Page, name: string) => page.locator(`[data-field="${name}"] .field-errors`);
/** The path of the page's URL under /ui. */
const uiPath = (page: Page) => new URL(page.url()).pathname.replace(/^\/ui/, '');

const SURVEY = [
  { variable: 'region', question: 'Region', type: 'choice', required: true, choices: ['eu', 'us'], default: 'eu' },
  { variable: 'count', question: 'How many', type: 'integer', required: true, min: 1, max: 5 },
  { variable: 'ratio', question: 'Ratio', type: 'float', required: false, min: 0, max: 1 },
  { variable: 'owner', question: 'Owner', type: 'text', required: false, max: 40 },
  { variable: 'notes', question: 'Notes', type: 'textarea', required: false },
  {
    variable: 'db_password',
    question: 'Database password',
    type: 'password',
    required: true,
    default: 'hunter2-s3cret',
  },
  { variable: 'dry', question: 'Dry run first', type: 'boolean', required: false },
  { variable: 'extras', question: 'Extras', type: 'multichoice', required: false, choices: ['logs', 'metrics'] },
];

beforeAll(async () => {
  repoDir = makeRepo();
  inventoryId = await localInventory(ui(), 'local', ['alpha']);
}, 90_000);

afterAll(async () => {
  if (repoDir) fs.rmSync(path.dirname(repoDir), { recursive: true, force: true });
});

describe('templates', () => {
  it('launches through the survey: a bad answer is shown at its field and launches nothing; a good one runs', async () => {
    const tpl = await api<Named>('POST', '/v1/templates', {
      name: 'deploy web',
      kind: 'run',
      spec: { playbook: PLAYBOOK, inventory_id: inventoryId },
      survey: SURVEY,
      allow_overrides: ['limit'],
    });
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/templates`);
      await page.getByRole('link', { name: 'deploy web', exact: true }).click();
      await page.getByRole('heading', { name: 'deploy web' }).waitFor();
      // The password default is never shown, only that one is set.
      await page.getByRole('cell', { name: 'set (hidden)' }).waitFor();
      expect(await page.content()).not.toContain('hunter2-s3cret');
      await page.getByRole('heading', { name: 'Who can use this' }).waitFor();
      await visited(page, 'template-detail');

      await page.getByRole('link', { name: 'Launch', exact: true }).click();
      await page.getByRole('heading', { name: 'Launch deploy web' }).waitFor();
      // Each question type has its own control.
      const tag = (label: string) => page.getByLabel(label).evaluate((e) => e.tagName.toLowerCase());
      const type = (label: string) => page.getByLabel(label).getAttribute('type');
      expect(await tag('Region (required)')).toBe('select');
      expect(await page.getByLabel('Region (required)').inputValue()).toBe('eu');
      expect([await tag('How many (required)'), await type('How many (required)')]).toEqual(['input', 'number']);
      expect(await page.getByLabel('How many (required)').getAttribute('min')).toBe('1');
      expect(await page.getByLabel('How many (required)').getAttribute('max')).toBe('5');
      expect(await type('Ratio')).toBe('number');
      expect(await page.getByLabel('Ratio').getAttribute('step')).toBe('any');
      expect(await type('Owner')).toBe('text');
      expect(await tag('Notes')).toBe('textarea');
      const password = page.getByLabel('Database password (required)');
      expect(await password.getAttribute('type')).toBe('password');
      expect(await password.inputValue()).toBe('');
      expect(await password.getAttribute('placeholder')).toMatch(/default set/);
      await page.getByText('A default is set: leave empty to use it.').waitFor();
      const dry = page.getByRole('group', { name: 'Dry run first' }).getByRole('checkbox');
      expect(await dry.count()).toBe(1);
      const extras = page.getByRole('group', { name: 'Extras' }).getByRole('checkbox');
      expect(await extras.count()).toBe(2);
      expect(await page.getByLabel('Limit').count()).toBe(1); // the one override allowed
      expect(await page.getByLabel('Inventory').count()).toBe(0);
      await visited(page, 'template-launch');

      await page.getByLabel('Region (required)').selectOption('us');
      await page.getByLabel('How many (required)').fill('99');
      await page.getByRole('group', { name: 'Extras' }).getByLabel('metrics').check();
      await page.getByRole('button', { name: 'Launch', exact: true }).click();
      await fieldErrors(page, 'survey_answers.count').filter({ hasText: 'at most 5' }).waitFor();
      expect(await page.getByLabel('How many (required)').getAttribute('aria-invalid')).toBe('true');
      expect(uiPath(page)).toBe(`/templates/${tpl.id}/launch`);
      expect(await api<RunView[]>('GET', `/v1/runs?template=${tpl.id}`)).toEqual([]);
      await visited(page, 'template-launch-bad-answer');

      await page.getByLabel('How many (required)').fill('3');
      await page.getByRole('button', { name: 'Launch', exact: true }).click();
      await page.waitForURL(/\/ui\/runs\/run_[0-9A-Z]{26}$/);
      const runId = uiPath(page).split('/').pop()!;
      const run = await waitFor('the launched run to finish', async () => {
        const r = await api<RunView>('GET', `/v1/runs/${runId}`);
        return r.status === 'finished' ? r : undefined;
      });
      expect(run.conclusion).toBe('succeeded');
      expect(run.survey_answers).toEqual({ region: 'us', count: 3, dry: false, extras: ['metrics'] });
      expect(run.extra_vars).toMatchObject({ region: 'us', count: 3, db_password: '$encrypted$' });
      expect(await api<RunView[]>('GET', `/v1/runs?template=${tpl.id}`)).toHaveLength(1);
    });
  });

  it('creates a template with a survey in the form; the API keeps what was typed', async () => {
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/templates/new`);
      await page.getByRole('heading', { name: 'New template' }).waitFor();
      await page.getByLabel('Name', { exact: true }).fill('ping fleet');
      await page.getByLabel('Playbook (YAML)').fill(PING);
      await page.getByLabel('Stored inventory', { exact: true }).selectOption(inventoryId);
      await page.getByLabel('Check mode (dry run: --check --diff)').check();
      await page.getByRole('button', { name: 'Add question' }).click();
      const q = page.locator('.survey-editor li').first();
      await q.getByLabel('Variable').fill('batch');
      await q.getByLabel('Question', { exact: true }).fill('Batch size');
      await q.getByLabel('Answer type').selectOption('integer');
      await q.getByLabel('Least value').fill('10');
      await q.getByLabel('Greatest value').fill('1');
      await q.getByLabel('Default', { exact: true }).fill('2');
      await visited(page, 'template-new');
      await page.getByRole('button', { name: 'Create template' }).click();
      // The API's messages for the question's fields show at those fields.
      await fieldErrors(page, 'survey.0.max').filter({ hasText: 'must not be less than min' }).waitFor();
      await q.getByLabel('Least value').fill('1');
      await q.getByLabel('Greatest value').fill('10');
      await page.getByRole('button', { name: 'Create template' }).click();
      await page.getByRole('heading', { name: 'ping fleet' }).waitFor();
      const id = uiPath(page).split('/').pop()!;
      const saved = await api<{ spec: Record<string, unknown>; survey: unknown[] }>('GET', `/v1/templates/${id}`);
      expect(saved.spec).toEqual({ playbook: PING, inventory_id: inventoryId, check: true });
      expect(saved.survey).toEqual([
        { variable: 'batch', question: 'Batch size', type: 'integer', required: false, default: 2, min: 1, max: 10 },
      ]);
    });
  });
});

describe('pipelines', () => {
  it('builds two steps in the step editor, reorders them and submits them as one pipeline', async () => {
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/pipelines`);
      await page.getByRole('heading', { name: 'Pipelines' }).waitFor();
      await visited(page, 'pipelines-empty');
      await page.getByRole('link', { name: 'New pipeline' }).click();
      await page.getByRole('heading', { name: 'New pipeline' }).waitFor();
      await page.getByLabel('Pipeline name').fill('release');
      await page.getByLabel('Stored inventory', { exact: true }).first().selectOption(inventoryId);
      const steps = page.getByTestId('pipeline-step');
      await steps.nth(0).getByLabel('Step name').fill('migrate');
      await steps.nth(0).getByLabel('Playbook (YAML)').fill(PING);
      await page.getByRole('button', { name: 'Add step' }).click();
      await steps.nth(1).getByLabel('Step name').fill('smoke test');
      await steps.nth(1).getByLabel('Playbook (YAML)').fill(PING);
      await steps.nth(1).getByLabel('Runs when').selectOption('always');
      await page.getByRole('button', { name: 'Move step 2 up' }).click();
      await steps.nth(0).getByRole('heading', { name: 'Step 1: smoke test' }).waitFor();
      await visited(page, 'pipeline-new');
      await page.getByRole('button', { name: 'Submit pipeline' }).click();
      await page.waitForURL(/\/ui\/runs\/run_[0-9A-Z]{26}$/);
      const id = uiPath(page).split('/').pop()!;
      const stepRuns = await api<RunView[]>('GET', `/v1/runs/${id}/steps`);
      expect(stepRuns.map((s) => s.step_name)).toEqual(['smoke test', 'migrate']);
      const done = await waitFor('the pipeline to finish', async () => {
        const r = await api<RunView>('GET', `/v1/runs/${id}`);
        return r.status === 'finished' ? r : undefined;
      });
      expect([done.kind, done.conclusion]).toEqual(['pipeline', 'succeeded']);

      await page.goto(`${ui().base}/ui/pipelines`);
      await page.getByRole('link', { name: 'release' }).waitFor();
      await visited(page, 'pipelines');
    });
  });
});

describe('schedules', () => {
  it('creates a schedule: its cron in words, and the next five times the API computes, in its zone', async () => {
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/schedules`);
      await page.getByText('No schedules yet').waitFor();
      await visited(page, 'schedules-empty');
      await page.getByRole('link', { name: 'New schedule' }).click();
      await page.getByRole('heading', { name: 'New schedule' }).waitFor();
      await page.getByLabel('Name', { exact: true }).fill('weekday mornings');
      await page.getByLabel('Cron expression').fill('61 2 * * 1-5');
      await page.getByLabel('Time zone').selectOption('Europe/Berlin');
      await page.getByLabel('Playbook (YAML)').fill(PING);
      await page.getByLabel('Stored inventory', { exact: true }).selectOption(inventoryId);
      await page.getByRole('button', { name: 'Create schedule' }).click();
      await fieldErrors(page, 'cron').waitFor();

      await page.getByLabel('Cron expression').fill('30 2 * * 1-5');
      await page
        .getByTestId('cron-words')
        .filter({ hasText: /02:30.*Monday through Friday/ })
        .waitFor();
      // While typing, the form shows the next five times the server computes for this expression in this zone.
      const previewList = page.getByTestId('next-times').filter({ hasText: '02:30:00' });
      await previewList.waitFor();
      const preview = previewList.locator('time');
      const previewed = await preview.evaluateAll((ts) => ts.map((t) => t.getAttribute('datetime')!));
      expect(previewed).toHaveLength(5);
      for (const text of await preview.allTextContents()) expect(text).toContain('02:30:00');
      await visited(page, 'schedule-new');
      await page.getByRole('button', { name: 'Create schedule' }).click();
      await page.getByRole('heading', { name: 'weekday mornings' }).waitFor();
      const id = uiPath(page).split('/').pop()!;
      const saved = await api<{ next_runs: string[]; timezone: string }>('GET', `/v1/schedules/${id}`);
      expect(saved.timezone).toBe('Europe/Berlin');
      expect(saved.next_runs).toHaveLength(5);
      const shown = page.getByTestId('next-times').locator('time');
      expect(await shown.evaluateAll((ts) => ts.map((t) => t.getAttribute('datetime')))).toEqual(saved.next_runs);
      // Each is 02:30 on a weekday in Berlin, as the cron says.
      const berlin = new Intl.DateTimeFormat('en-GB', {
        timeZone: 'Europe/Berlin',
        weekday: 'short',
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h23',
      });
      for (const t of [...saved.next_runs, ...previewed])
        expect(berlin.format(new Date(t))).toMatch(/^(Mon|Tue|Wed|Thu|Fri) 02:30$/);
      for (const text of await shown.allTextContents()) expect(text).toContain('02:30:00');
      await visited(page, 'schedule-detail');

      await page.getByRole('button', { name: 'Disable' }).click();
      await page.getByRole('button', { name: 'Enable' }).waitFor();
      await page.getByTestId('next-times').waitFor({ state: 'detached' });
      expect(await api<{ enabled: boolean; next_runs: string[] }>('GET', `/v1/schedules/${id}`)).toMatchObject({
        enabled: false,
        next_runs: [],
      });

      await page.goto(`${ui().base}/ui/schedules`);
      await page.getByRole('link', { name: 'weekday mornings' }).waitFor();
      await visited(page, 'schedules');
    });
  });
});

describe('triggers', () => {
  const deliver = (hookUrl: string, secret: string) => {
    const body = JSON.stringify({ zen: 'hello', hook_id: 1 });
    return fetch(hookUrl, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-GitHub-Event': 'ping',
        'X-Hub-Signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
      },
      body,
    }).then((r) => r.status);
  };

  it('shows the hook URL and secret once; rotate shows a new one once; settings and delete', async () => {
    const project = await api<Named>('POST', '/v1/projects', { name: 'web repo', git_url: `file://${repoDir}` });
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/triggers`);
      await page.getByText('No triggers yet').waitFor();
      await visited(page, 'triggers-empty');
      await page.getByRole('link', { name: 'New trigger' }).click();
      await page.getByRole('heading', { name: 'New trigger' }).waitFor();
      await page.getByLabel('Name', { exact: true }).fill('on push to main');
      await page.getByLabel('Project', { exact: true }).selectOption(project.id);
      await page.getByLabel('Playbook path').fill('site.yml');
      await page.getByLabel('Stored inventory', { exact: true }).selectOption(inventoryId);
      await page.getByLabel('Branches').fill('main');
      await visited(page, 'trigger-new');
      await page.getByRole('button', { name: 'Create trigger' }).click();

      const secretShown = page.getByTestId('secret-value');
      await secretShown.waitFor();
      const secret = (await secretShown.textContent())!.trim();
      const hookUrl = (await page.getByTestId('hook-url').textContent())!.trim();
      expect(secret.length).toBeGreaterThan(20);
      expect(hookUrl).toMatch(/\/hooks\/[^/]+$/);
      await page.getByText('it is shown only this once').waitFor();
      await page.getByRole('button', { name: 'Copy', exact: true }).waitFor();
      await visited(page, 'trigger-created-secret');
      // The secret shown is the one the hook checks.
      expect(await deliver(hookUrl, secret)).toBe(202);
      expect(await deliver(hookUrl, 'not the secret')).toBe(401);

      await page.getByRole('button', { name: 'I have stored it' }).click();
      await page.getByRole('heading', { name: 'on push to main' }).waitFor();
      const triggerPath = uiPath(page);
      expect(await secretShown.count()).toBe(0);
      await page.goto(`${ui().base}/ui/triggers`);
      await page.getByRole('link', { name: 'on push to main' }).click();
      await page.getByRole('heading', { name: 'on push to main' }).waitFor();
      expect(uiPath(page)).toBe(triggerPath);
      expect(await secretShown.count()).toBe(0);
      expect(await page.content()).not.toContain(secret);
      await visited(page, 'trigger-detail');

      // Rotate: confirmed, a new secret shown once; the old one is refused from now on.
      await page.getByRole('button', { name: 'Rotate secret' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByRole('button', { name: 'Rotate secret' }).click();
      await secretShown.waitFor();
      const rotated = (await secretShown.textContent())!.trim();
      expect(rotated).not.toBe(secret);
      expect(await page.getByTestId('hook-url').textContent()).toBe(hookUrl);
      await visited(page, 'trigger-rotated-secret');
      expect(await deliver(hookUrl, secret)).toBe(401);
      expect(await deliver(hookUrl, rotated)).toBe(202);
      await page.goto(`${ui().base}/ui/triggers`);
      await page.getByRole('link', { name: 'on push to main' }).click();
      await page.getByRole('heading', { name: 'on push to main' }).waitFor();
      expect(await secretShown.count()).toBe(0);

      // Rename and stop enforcing signatures.
      await page.getByLabel('Name', { exact: true }).fill('on push');
      await page.getByLabel(/Enforce signatures/).uncheck();
      await page.getByRole('button', { name: 'Save settings' }).click();
      await page.getByRole('heading', { name: 'on push', exact: true }).waitFor();
      const id = triggerPath.split('/').pop()!;
      expect(await api<{ name: string; require_signature: boolean }>('GET', `/v1/triggers/${id}`)).toMatchObject({
        name: 'on push',
        require_signature: false,
      });

      await page.getByRole('button', { name: 'Delete' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
      await page.getByText('No triggers yet').waitFor();
      expect((await call(ui(), ui().adminToken, 'GET', `/v1/triggers/${id}`)).status).toBe(404);
    });
  });
});

describe('a viewer', () => {
  it('sees templates, pipelines, schedules and triggers without create, launch, edit or delete buttons', async () => {
    const viewer = await createUser(ui(), 'launch-viewer', 'viewer');
    const tpl = await api<Named>('POST', '/v1/templates', {
      name: 'viewable template',
      kind: 'run',
      spec: { playbook: PING, inventory_id: inventoryId },
    });
    const sch = await api<Named>('POST', '/v1/schedules', {
      name: 'viewable schedule',
      cron: '0 4 * * *',
      target: { template_id: tpl.id },
    });
    for (const object of [tpl.id, sch.id])
      await api('POST', '/v1/grants', { subject: viewer.id, object, level: 'use' });
    const { page, problems, close } = await openPage(browser());
    // Only the page's own actions count (the navigation's "Launch" section is not a button).
    const none = async (name: string | RegExp) => {
      const main = page.getByRole('main');
      const exact = typeof name === 'string';
      expect(await main.getByRole('link', { name, exact }).or(main.getByRole('button', { name, exact })).count()).toBe(
        0,
      );
    };
    try {
      await signIn(page, ui().base, 'launch-viewer', viewer.password);
      await page.goto(`${ui().base}/ui/templates`);
      await page.getByRole('link', { name: 'viewable template', exact: true }).waitFor();
      await none('New template');
      await none(/^Launch/);
      await visited(page, 'viewer-templates');
      await page.getByRole('link', { name: 'viewable template', exact: true }).click();
      await page.getByRole('heading', { name: 'viewable template' }).waitFor();
      await page.getByRole('heading', { name: 'Who can use this' }).waitFor();
      for (const name of ['Launch', 'Edit', 'Delete']) await none(name);
      await visited(page, 'viewer-template-detail');

      await page.goto(`${ui().base}/ui/schedules`);
      await page.getByRole('link', { name: 'viewable schedule' }).click();
      await page.getByRole('heading', { name: 'viewable schedule' }).waitFor();
      for (const name of ['Disable', 'Enable', 'Edit', 'Delete']) await none(name);
      await visited(page, 'viewer-schedule-detail');
      await page.goto(`${ui().base}/ui/schedules`);
      await page.getByRole('link', { name: 'viewable schedule' }).waitFor();
      await none('New schedule');

      await page.goto(`${ui().base}/ui/pipelines`);
      await page.getByRole('heading', { name: 'Pipelines' }).waitFor();
      await none('New pipeline');
      await visited(page, 'viewer-pipelines');
      await page.goto(`${ui().base}/ui/triggers`);
      await page.getByText('No triggers yet').waitFor();
      await none('New trigger');
      await visited(page, 'viewer-triggers');
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });
});
