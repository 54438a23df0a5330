// /tasks — task duration trends, slowest p95 first; each task opens its chart. Filters live in the address.
import type { TaskTrend } from '@baton/contracts';
import { Link } from 'wouter';
import { qs } from '../../api/client';
import { usePagedList } from '../../api/hooks';
import { EmptyState, NoMatches, PageHeader } from '../../ui/layout';
import { NumericHeads, PagedTable } from '../../ui/PagedTable';
import { useProjects } from '../runs/lookups';
import { FilterBar, HOST_FILTER, PLAYBOOK_FILTER } from './FilterControls';
import { hostPath, useUrlFilters } from './filters';
import { seconds } from './format';
import { Trend } from './Trend';
import './observation.css';

const KEYS = ['playbook', 'project', 'host', 'window'] as const;
/** The API's default and bounds for `window` (TaskTrendQuery). */
const DEFAULT_WINDOW = 50;
const MAX_WINDOW = 500;

export default function TasksPage() {
  const filters = useUrlFilters(KEYS);
  const f = filters.values;
  const list = usePagedList<TaskTrend>(`/v1/tasks${qs(f)}`);
  const projects = useProjects();
  const windowRuns = f.window ?? String(DEFAULT_WINDOW);
  return (
    <>
      <PageHeader
        title="Tasks"
        subtitle={
          <>
            How long each task takes over its last {windowRuns} runs
            {f.host ? (
              <>
                {' '}
                on <span className="mono">{f.host}</span>
              </>
            ) : null}
            , slowest p95 first. A task&apos;s time in a run is its slowest host&apos;s; the trend compares the median
            of the newer half of the window with the older half.
          </>
        }
      />
      <FilterBar
        label="Filter tasks"
        filters={filters}
        error={list.error}
        fields={[
          PLAYBOOK_FILTER,
          { kind: 'named', name: 'project', label: 'Project', items: projects.items },
          HOST_FILTER,
          {
            kind: 'text',
            name: 'window',
            label: 'Window (runs)',
            type: 'number',
            min: 2,
            max: MAX_WINDOW,
            placeholder: String(DEFAULT_WINDOW),
          },
        ]}
      />
      <PagedTable
        list={list}
        what="Loading tasks"
        caption="Tasks, slowest p95 first"
        className="tasks-table"
        testId="tasks"
        empty={
          filters.any ? (
            <NoMatches what="tasks" onClear={filters.clear} />
          ) : (
            <EmptyState title="No task durations yet">
              Tasks appear here once a run you may see has finished.
            </EmptyState>
          )
        }
        head={
          <>
            <th scope="col">Task</th>
            <th scope="col">Playbook:path</th>
            <NumericHeads labels={['Runs', 'Mean', 'p50', 'p95', 'Last', 'Trend']} />
            <th scope="col">Slowest hosts (p50)</th>
          </>
        }
        row={(t) => <TaskRow key={t.key} task={t} />}
      />
    </>
  );
}

function TaskRow({ task: t }: { task: TaskTrend }) {
  return (
    <tr data-task={t.key}>
      <th scope="row">
        <Link href={`/tasks/${t.key}`}>{t.task || <em>(unnamed task)</em>}</Link>
        {t.action ? <div className="muted mono obs-small">{t.action}</div> : null}
      </th>
      <td className="mono obs-path">
        <TaskWhere task={t} />
      </td>
      <td className="num">{t.runs}</td>
      <td className="num">{seconds(t.mean_s)}</td>
      <td className="num">{seconds(t.p50_s)}</td>
      <td className="num">{seconds(t.p95_s)}</td>
      <td className="num">{seconds(t.last_s)}</td>
      <td className="num">
        <Trend pct={t.trend_pct} />
      </td>
      <td>
        <ul className="slowest-hosts">
          {t.slowest_hosts.map((h) => (
            <li key={h.host}>
              <Link href={hostPath(h.host)} className="mono">
                {h.host}
              </Link>{' '}
              <span className="muted">{seconds(h.p50_s)}</span>
            </li>
          ))}
        </ul>
      </td>
    </tr>
  );
}

/** "site.yml:12": the task path names its file; the playbook is added when the task lives in another file (a role). */
export function TaskWhere({ task }: { task: Pick<TaskTrend, 'playbook' | 'task_path'> }) {
  const inPlaybook = task.task_path.startsWith(`${task.playbook}:`);
  return (
    <span title={`${task.playbook} → ${task.task_path}`}>
      {inPlaybook ? task.task_path : `${task.playbook} · ${task.task_path}`}
    </span>
  );
}
