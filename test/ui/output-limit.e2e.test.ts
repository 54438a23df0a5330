// The run page of a run that printed past BATON_RUN_OUTPUT_LIMIT_MB, against a real `baton serve` (1 MB limit) and
// a real ansible-playbook: the notice is shown, the log ends with the server's marker line, and a run under the
// limit shows no notice.
import { expect, it } from '@jest/globals';
import type { Run } from '@baton/contracts';
import { waitFor } from '../support/baton-process.js';
import { call, localInventory, setupUi, signIn, ADMIN_PASSWORD, visited, withPage } from './support/browser.js';

const { ui, browser } = setupUi({ env: { BATON_RUN_OUTPUT_LIMIT_MB: '1' } });

/** About 1.4 MB of log: a list of 100,000 numbers, one a line. */
const LOUD =
  '- hosts: all\n  gather_facts: false\n  tasks:\n' +
  '    - command: seq 1 100000\n      register: out\n' +
  '    - debug: var=out.stdout_lines\n' +
  '    - debug: msg=after-the-limit\n';
const QUIET = '- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: msg=quiet\n';

async function runToEnd(playbook: string, inventoryId: string): Promise<Run> {
  const submitted = await call<Run>(ui(), ui().adminToken, 'POST', '/v1/runs', { playbook, inventory_id: inventoryId });
  expect(submitted.status).toBe(201);
  return waitFor(
    `run ${submitted.body.id} to finish`,
    async () => {
      const r = await call<Run>(ui(), ui().adminToken, 'GET', `/v1/runs/${submitted.body.id}`);
      return r.body.status === 'finished' ? r.body : undefined;
    },
    180_000,
  );
}

it('shows a truncated run as such, with the marker at the end of its log; a run under the limit shows nothing', async () => {
  const inventory = await localInventory(ui(), 'limit-local', ['alpha']);
  const loud = await runToEnd(LOUD, inventory);
  expect(loud).toMatchObject({ conclusion: 'succeeded', output_truncated: true });
  const quiet = await runToEnd(QUIET, inventory);
  expect(quiet).toMatchObject({ conclusion: 'succeeded', output_truncated: false });

  await withPage(browser(), async (page) => {
    await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
    await page.goto(`${ui().base}/ui/runs/${loud.id}`);
    const notice = page.getByTestId('output-truncated');
    await notice.waitFor();
    expect(await notice.getAttribute('role')).toBe('status');
    expect(await notice.textContent()).toContain('Output truncated');
    expect(await notice.textContent()).toContain('BATON_RUN_OUTPUT_LIMIT_MB');
    // The log's last line (linked by its number) is the server's marker.
    await page.goto(`${ui().base}/ui/runs/${loud.id}#L${loud.log_lines}`);
    await page.getByTestId('output-truncated').waitFor();
    await page.getByText('baton: output truncated: this run printed more than 1 MB').first().waitFor();
    await visited(page, 'run-output-truncated');

    await page.goto(`${ui().base}/ui/runs/${quiet.id}`);
    await page.getByText('PLAY RECAP').first().waitFor();
    expect(await page.getByTestId('output-truncated').count()).toBe(0);
  });
}, 300_000);
