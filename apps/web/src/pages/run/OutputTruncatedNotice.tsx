// Says plainly that a run's log is not all it printed: past BATON_RUN_OUTPUT_LIMIT_MB the server kept nothing more.
import type { Run } from '@baton/contracts';

export function OutputTruncatedNotice({ run }: { run: Pick<Run, 'output_truncated'> }) {
  if (!run.output_truncated) return null;
  return (
    <div className="banner banner-warn" role="status" data-testid="output-truncated">
      <strong>Output truncated</strong>
      <p>
        This run printed more than the server keeps (BATON_RUN_OUTPUT_LIMIT_MB). The log ends where the limit was
        reached; later events show only their task, host and status, without their results. The run itself went on to
        its end, and its outcome and host counts are complete.
      </p>
    </div>
  );
}
