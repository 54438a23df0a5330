import { z } from 'zod';

/**
 * One event of a run (ARCHITECTURE.md, "Events"): a gap-free `seq` from 1 per run, assigned by the one
 * executor running it. Kinds: `status` (status/conclusion changes, and the final exit code and stats),
 * `log` (a stdout chunk with its line range), and Ansible's event names (`playbook_on_start`,
 * `playbook_on_task_start`, `runner_on_ok`, `runner_on_failed`, `runner_on_unreachable`, `runner_item_on_*`,
 * `runner_on_file_diff`, `playbook_on_stats`, …).
 */
export const RunEvent = z
  .object({
    run_id: z.string(),
    seq: z.number().int().positive(),
    ts: z.string(),
    kind: z.string().min(1),
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'RunEvent' });
export type RunEvent = z.infer<typeof RunEvent>;

/** `log` event data: stdout lines [start_line, end_line) of the run's log, 1-based start. */
export interface LogEventData {
  text: string;
  start_line: number;
  end_line: number;
}
