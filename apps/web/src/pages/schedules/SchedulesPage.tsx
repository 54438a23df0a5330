// Schedules: cron expressions in a time zone that start a run, a pipeline or a template as their owner.
import type { Schedule } from '@baton/contracts';
import { Link } from 'wouter';
import { usePagedList } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { EmptyState, PageHeader } from '../../ui/layout';
import { PagedTable } from '../../ui/PagedTable';
import { Time } from '../../ui/Time';
import { useTemplateList } from '../templates/spec/lookups';
import { targetWords } from '../templates/spec/SpecSummary';
import { describeCron } from './cron';
import '../templates/spec/launch.css';

export default function SchedulesPage() {
  const canCreate = useHasRole('operator');
  const list = usePagedList<Schedule>('/v1/schedules', { refetchInterval: 30_000 });
  const templates = useTemplateList(list.items.some((s) => s.target.template_id));
  return (
    <>
      <PageHeader
        title="Schedules"
        subtitle="Cron expressions read in a time zone; each due time fires exactly once, as the schedule's owner."
        actions={
          canCreate ? (
            <Link href="/schedules/new" className="btn btn-primary">
              New schedule
            </Link>
          ) : null
        }
      />
      <PagedTable
        list={list}
        what="Loading schedules"
        caption="Schedules"
        empty={
          <EmptyState title="No schedules yet">
            {canCreate
              ? 'Run something on a timetable with “New schedule”: a run, a pipeline or a template, at cron times in your zone.'
              : 'Ask an operator to schedule a run, or to grant you access to a schedule.'}
          </EmptyState>
        }
        head={
          <>
            <th scope="col">Name</th>
            <th scope="col">Starts</th>
            <th scope="col">Cron</th>
            <th scope="col">Time zone</th>
            <th scope="col">Enabled</th>
            <th scope="col">Next run</th>
            <th scope="col">Last fired</th>
          </>
        }
        row={(s) => (
          <tr key={s.id}>
            <td>
              <Link href={`/schedules/${s.id}`}>{s.name}</Link>
            </td>
            <td>{targetWords(s.target, templates.nameOf)}</td>
            <td>
              <code>{s.cron}</code>
              <div className="muted">{describeCron(s.cron).words}</div>
            </td>
            <td>{s.timezone}</td>
            <td>{s.enabled ? 'yes' : 'no'}</td>
            <td>
              <Time at={s.next_run_at} empty="—" />
            </td>
            <td>
              {s.last_run_id ? (
                <Link href={`/runs/${s.last_run_id}`}>
                  <Time at={s.last_fired_at} />
                </Link>
              ) : (
                <Time at={s.last_fired_at} empty="never" />
              )}
              {s.last_error ? <div className="field-errors">{s.last_error}</div> : null}
            </td>
          </tr>
        )}
      />
    </>
  );
}
