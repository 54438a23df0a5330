// Running real playbooks in tests: an inline bundle against this machine, and a run whose events are collected.
import type { RunBundle, RunEvent } from '@baton/contracts';
import { type RunOutcome, runPlaybook, type RunPlaybookOptions } from '../playbook/run-playbook.js';

export const LOCAL_INVENTORY = 'localhost ansible_connection=local\n';

/** One play on all hosts, without fact gathering; `tasks` is its indented task list. */
export const play = (tasks: string, header = '') => `- hosts: all\n  gather_facts: false\n${header}  tasks:\n${tasks}`;

/** An inline playbook against localhost; `extra` overrides any field. */
export function inlineBundle(content: string, extra: Partial<RunBundle> = {}): RunBundle {
  return {
    run_id: 'run_test',
    playbook: { source: 'inline', content },
    inventory: { content: LOCAL_INVENTORY, format: 'ini' },
    check: false,
    credentials: [],
    ...extra,
  };
}

/** Runs the bundle to its end and returns its outcome, its events in order, its log text and the event kinds. */
export async function runCollecting(bundle: RunBundle, opts: Partial<RunPlaybookOptions> = {}) {
  const events: RunEvent[] = [];
  const outcome = await runPlaybook(bundle, {
    ...opts,
    onEvent: (e) => {
      events.push(e);
      opts.onEvent?.(e);
    },
  });
  const log = events
    .filter((e) => e.kind === 'log')
    .map((e) => e.data.text as string)
    .join('');
  return { outcome, events, log, kinds: events.map((e) => e.kind) };
}

/** What runPlaybook answers for a run that succeeded, for stand-ins of it; `over` replaces any part. */
export const succeededOutcome = (over: Partial<RunOutcome> = {}): RunOutcome => ({
  exitCode: 0,
  conclusion: 'succeeded',
  stats: {},
  logLines: 0,
  ...over,
});
