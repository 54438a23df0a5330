// /tasks/:key — one task: its trend, its duration per run as a chart, and the numbers behind the chart.
import type { TaskDetail } from '@baton/contracts';
import { Link, useParams } from 'wouter';
import { useApi } from '../../api/hooks';
import { Details, PageHeader } from '../../ui/layout';
import { NotLoaded } from '../../ui/ObjectPage';
import { absoluteTime } from '../../ui/Time';
import { useProjects } from '../runs/lookups';
import { DurationChart } from './DurationChart';
import { hostPath } from './filters';
import { seconds } from './format';
import { TaskWhere } from './TasksPage';
import { Trend } from './Trend';
import './observation.css';

export default function TaskPage() {
  const { key } = useParams<{ key: string }>();
  const q = useApi<TaskDetail>(`/v1/tasks/${encodeURIComponent(key)}`);
  const projects = useProjects();
  if (q.error || !q.data) return <NotLoaded error={q.error} what="Loading the task" />;
  const t = q.data;
  const name = t.task || '(unnamed task)';
  return (
    <>
      <PageHeader
        title={`Task ${name}`}
        subtitle={<TaskWhere task={t} />}
        actions={
          <Link href="/tasks" className="btn">
            All tasks
          </Link>
        }
      />
      <Details
        items={[
          ['Action', t.action ? <span className="mono">{t.action}</span> : null],
          ['Playbook', <span className="mono">{t.playbook}</span>],
          ['Project', t.project_id ? (projects.nameOf(t.project_id) ?? t.project_id) : null],
          ['Runs', String(t.runs)],
          ['Mean', seconds(t.mean_s)],
          ['p50 / p95', `${seconds(t.p50_s)} / ${seconds(t.p95_s)}`],
          ['Last', seconds(t.last_s)],
          ['Trend', <Trend pct={t.trend_pct} />],
          [
            'Slowest hosts (p50)',
            t.slowest_hosts.length ? (
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
            ) : null,
          ],
        ]}
      />
      <section aria-labelledby="chart-heading">
        <h2 id="chart-heading">Duration per run</h2>
        <p className="muted obs-note">Each point is one run: the time its slowest host took for this task.</p>
        <DurationChart points={t.points} label={name} />
        <details className="card points">
          <summary>Details: the {t.points.length} runs charted</summary>
          <div className="table-wrap">
            <table aria-label="Durations per run, oldest first" data-testid="task-points">
              <thead>
                <tr>
                  <th scope="col">Run</th>
                  <th scope="col">Finished</th>
                  <th scope="col" className="num">
                    Duration
                  </th>
                  <th scope="col">Hosts</th>
                </tr>
              </thead>
              <tbody>
                {t.points.map((p) => (
                  <tr key={p.run_id} data-run={p.run_id}>
                    <td>
                      <Link href={`/runs/${p.run_id}`} className="mono">
                        {p.run_id}
                      </Link>
                    </td>
                    <td>{absoluteTime(new Date(p.finished_at))}</td>
                    <td className="num">{seconds(p.duration_s)}</td>
                    <td className="obs-small">
                      <HostTimes hosts={p.hosts} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </details>
      </section>
    </>
  );
}

/** Seconds per host in one run, slowest first (the first few: a run may have hundreds of hosts). */
const HOSTS_SHOWN = 8;
function HostTimes({ hosts }: { hosts: Record<string, number> }) {
  const sorted = Object.entries(hosts).sort((a, b) => b[1] - a[1]);
  const shown = sorted.slice(0, HOSTS_SHOWN).map(([h, s]) => `${h} ${seconds(s)}`);
  if (sorted.length > HOSTS_SHOWN) shown.push(`${sorted.length - HOSTS_SHOWN} more`);
  return <>{shown.join(' · ')}</>;
}
