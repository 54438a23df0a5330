// In place of the log and events of a run whose output retention removed (BATON_RETENTION_DAYS): an empty log would
// look like a run that printed nothing.
import type { Run } from '@baton/contracts';
import { Time } from '../../ui/Time';

export function OutputPrunedNotice({ run }: { run: Pick<Run, 'output_pruned_at' | 'log_lines'> }) {
  if (!run.output_pruned_at) return null;
  return (
    <div className="banner banner-info" role="status" data-testid="output-pruned">
      <strong>Log and events removed by retention</strong>
      <p>
        The log ({run.log_lines} lines) and the events of this run were removed by retention on{' '}
        <Time at={run.output_pruned_at} /> (BATON_RETENTION_DAYS). Its outcome, host counts, task results and drift
        findings are kept.
      </p>
    </div>
  );
}
