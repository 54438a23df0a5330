// One schedule: when it fires next (five times, in its zone), what it starts, enable/disable, who may use it, runs.
import type { Schedule, User } from '@baton/contracts';
import { Link, useParams } from 'wouter';
import { useApi, useApiMutation } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { AccessPanel } from '../../ui/AccessPanel';
import { ErrorBanner, FormError } from '../../ui/forms';
import { Details, EmptyState, PageHeader } from '../../ui/layout';
import { DeleteButton, NotLoaded, useDeleteObject } from '../../ui/ObjectPage';
import { Time } from '../../ui/Time';
import { ObjectRuns } from '../runs/ObjectRuns';
import { TargetSummary } from '../templates/spec/SpecSummary';
import { describeCron, NextTimes } from './cron';
import '../templates/spec/launch.css';

export default function SchedulePage() {
  const { id } = useParams<{ id: string }>();
  const canChange = useHasRole('operator');
  const q = useApi<Schedule>(`/v1/schedules/${id}`);
  const owner = useApi<User>(q.data ? `/v1/users/${q.data.created_by}` : null, { retry: false });
  const toggle = useApiMutation<{ enabled: boolean }, Schedule>('PUT', `/v1/schedules/${id}`, {
    invalidate: ['/v1/schedules'],
  });
  const remove = useDeleteObject('schedules', id);
  if (!q.data) return <NotLoaded error={q.error} what="Loading the schedule" />;
  const s = q.data;
  return (
    <>
      <PageHeader
        title={s.name}
        subtitle={describeCron(s.cron).words}
        actions={
          canChange ? (
            <div className="actions-row">
              <button
                type="button"
                className="btn"
                disabled={toggle.isPending}
                onClick={() => toggle.mutate({ enabled: !s.enabled })}
              >
                {s.enabled ? 'Disable' : 'Enable'}
              </button>
              <Link href={`/schedules/${s.id}/edit`} className="btn">
                Edit
              </Link>
              <DeleteButton
                remove={remove}
                question={`Delete the schedule ${s.name}?`}
                detail="It will not fire again; runs it started stay."
              />
            </div>
          ) : null
        }
      />
      <FormError error={toggle.error ?? remove.error} />
      {s.last_error ? <ErrorBanner title="The last fire could not submit">{s.last_error}</ErrorBanner> : null}
      <Details
        items={[
          ['Cron', <code key="c">{s.cron}</code>],
          ['Time zone', s.timezone],
          ['Enabled', s.enabled ? 'yes' : 'no'],
          ['Next run', <Time key="n" at={s.next_run_at} empty="— (disabled)" />],
          [
            'Last fired',
            s.last_run_id ? (
              <Link key="l" href={`/runs/${s.last_run_id}`}>
                <Time at={s.last_fired_at} />
              </Link>
            ) : (
              <Time key="l" at={s.last_fired_at} empty="never" />
            ),
          ],
          ['Owner (runs are submitted as)', owner.data?.username ?? s.created_by],
          ['Created', <Time key="cr" at={s.created_at} />],
        ]}
      />
      <h2>
        Next {s.next_runs.length || ''} times in {s.timezone}
      </h2>
      <NextTimes times={s.next_runs} zone={s.timezone} />
      <h2>What it starts</h2>
      <TargetSummary target={s.target} />
      <AccessPanel objectId={s.id} />
      <h2>Runs</h2>
      <ObjectRuns
        filter={{ schedule: s.id }}
        caption="Runs of this schedule"
        empty={<EmptyState title="Not fired yet">Its runs are listed here once a due time has come.</EmptyState>}
      />
    </>
  );
}
