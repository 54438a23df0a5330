// /runs/:id — one run: header and actions, shards or steps, per-host outcomes, the live log and the events.
import type { Run } from '@baton/contracts';
import { useQueryClient } from '@tanstack/react-query';
import { useParams } from 'wouter';
import { invalidatePaths, useApi } from '../../api/hooks';
import { NotLoaded } from '../../ui/ObjectPage';
import { ChildRuns, childKind, useChildRuns } from './ChildRuns';
import { EventsTable } from './EventsTable';
import { HostTable } from './HostTable';
import { LogViewer } from './log/LogViewer';
import { OutputPrunedNotice } from './OutputPrunedNotice';
import { OutputTruncatedNotice } from './OutputTruncatedNotice';
import { useRunLog } from './log/useRunLog';
import { RunHeader } from './RunHeader';
import { RunDriftPanel } from '../observation/RunDriftPanel';
import { RunExplainPanel } from '../ai/RunExplainPanel';
import { RunProposalPanel } from '../ai/RunProposalPanel';
import './run.css';

export default function RunPage() {
  const { id } = useParams<{ id: string }>();
  // A fresh view per run: going from a run to its retry starts a new log.
  return <RunView key={id} id={id} />;
}

function RunView({ id }: { id: string }) {
  const client = useQueryClient();
  const run = useApi<Run>(`/v1/runs/${id}`);
  // The stream's status events refresh the header, the hosts and the lists of runs.
  const log = useRunLog(run.data, () => void invalidatePaths(client, ['/v1/runs']));
  const children = useChildRuns(run.data);
  if (run.error || !run.data) return <NotLoaded error={run.error} what="Loading the run" />;
  const r = run.data;
  const parent = childKind(r) !== null;
  return (
    <div className="run-page">
      <RunHeader run={r} />
      <RunProposalPanel run={r} />
      {parent ? <ChildRuns run={r} /> : null}
      <HostTable run={r} children={parent ? children.data : undefined} />
      <RunDriftPanel run={r} />
      <RunExplainPanel run={r} hasLog={!parent} />
      <OutputTruncatedNotice run={r} />
      {parent ? (
        <p className="muted">
          Each {r.kind === 'pipeline' ? 'step' : 'shard'} has its own log: open it from the table above.
        </p>
      ) : r.output_pruned_at ? (
        <OutputPrunedNotice run={r} />
      ) : (
        <LogViewer run={r} log={log} />
      )}
      {r.output_pruned_at ? null : <EventsTable runId={r.id} />}
    </div>
  );
}
