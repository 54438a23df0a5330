// Workers: the executors that run playbooks, with their lease freshness, refreshed every few seconds.
import { Badge, type Icon, type Tone } from '../../ui/Status';
import type { Worker } from '@baton/contracts';
import { Link } from 'wouter';
import { useApi } from '../../api/hooks';
import { LoadError } from '../../ui/forms';
import { EmptyState, Loading, PageHeader } from '../../ui/layout';
import { Time } from '../../ui/Time';
import './workers.css';

const REFRESH_MS = 5_000;

/** Lease freshness in the one status look: fresh ≤ 15 s since the last heartbeat, stale ≤ 30 s, then lost. */
const FRESHNESS: Record<Worker['freshness'], { icon: Icon; label: string; tone: Tone; why: string }> = {
  fresh: { icon: 'dot', label: 'Fresh', tone: 'ok', why: 'heartbeat within the last 15 s' },
  stale: { icon: 'triangle', label: 'Stale', tone: 'warn', why: 'no heartbeat for over 15 s' },
  dead: { icon: 'cross', label: 'Lost', tone: 'bad', why: 'no heartbeat for over 30 s: its runs end as worker_lost' },
};

export function FreshnessBadge({ freshness }: { freshness: Worker['freshness'] }) {
  const look = FRESHNESS[freshness];
  return (
    <Badge tone={look.tone} icon={look.icon} label={look.label} title={look.why} data={{ freshness: freshness }} />
  );
}

/** Why a worker leases no new run, said where its lease is: it is alive, but not taking work. */
const PAUSED: Record<NonNullable<Worker['paused']>, { label: string; why: string }> = {
  event_buffer_full: {
    label: 'Paused: event buffer full',
    why: 'It cannot send its runs’ events to Redis and holds more than BATON_WORKER_BUFFER_MB of them. None is dropped; its running runs go on, and it takes new runs again once the events are sent.',
  },
};

export function PausedBadge({ paused }: { paused: NonNullable<Worker['paused']> }) {
  const look = PAUSED[paused];
  return <Badge tone="held" icon="pause" label={look.label} title={look.why} data={{ paused }} />;
}

export default function WorkersPage() {
  const workers = useApi<Worker[]>('/v1/workers', { refetchInterval: REFRESH_MS });
  const list = workers.data ?? [];
  const embedded = list.length > 0 && list.every((w) => w.mode === 'embedded');
  const paused = list.filter((w) => w.paused !== null && w.freshness !== 'dead');
  return (
    <>
      <PageHeader title="Workers" subtitle={`Executors that run playbooks. Refreshed every ${REFRESH_MS / 1000} s.`} />
      {workers.error ? (
        <LoadError error={workers.error} />
      ) : workers.isLoading ? (
        <Loading what="Loading workers" />
      ) : list.length === 0 ? (
        <EmptyState title="No workers are registered">
          In embedded mode, <code>baton serve</code> runs playbooks with executors inside its own process, and they
          appear here once it has started them. In queue mode, start one or more <code>baton worker</code> daemons (they
          need Redis and <code>BATON_WORKER_KEY</code>); each appears here with its first heartbeat.
        </EmptyState>
      ) : (
        <>
          {embedded ? (
            <p className="banner banner-info">
              Embedded mode: these executors run inside <code>baton serve</code> itself. For more capacity or other
              hosts, run the server in queue mode with <code>baton worker</code> daemons.
            </p>
          ) : null}
          {paused.length > 0 ? (
            <p className="banner banner-warn" role="status">
              {paused.length === 1
                ? `${paused[0]!.name} takes no new runs: its events cannot reach Redis and its buffer is full.`
                : `${paused.length} workers take no new runs: their events cannot reach Redis and their buffers are full.`}{' '}
              Check the network between the workers and Redis; no event is lost.
            </p>
          ) : null}
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Lease</th>
                  <th scope="col">Mode</th>
                  <th scope="col">Host</th>
                  <th scope="col">Labels</th>
                  <th scope="col" className="num">
                    Running / capacity
                  </th>
                  <th scope="col">Last heartbeat</th>
                  <th scope="col">Started</th>
                </tr>
              </thead>
              <tbody>
                {list.map((w) => (
                  <tr key={w.id} data-worker={w.name}>
                    <td>
                      <strong>{w.name}</strong>
                    </td>
                    <td>
                      <span className="worker-lease">
                        <FreshnessBadge freshness={w.freshness} />
                        {/* A lost worker's last word is history, not its state. */}
                        {w.paused && w.freshness !== 'dead' ? <PausedBadge paused={w.paused} /> : null}
                      </span>
                    </td>
                    <td>{w.mode === 'embedded' ? 'embedded (in-process)' : 'daemon'}</td>
                    <td>{w.host}</td>
                    <td>
                      {w.labels.length ? (
                        <ul className="worker-labels" aria-label={`Labels of ${w.name}`}>
                          {w.labels.map((l) => (
                            <li key={l}>
                              <code>{l}</code>
                            </li>
                          ))}
                        </ul>
                      ) : (
                        <span className="muted">none</span>
                      )}
                    </td>
                    <td className="num">
                      {w.running_count} / {w.capacity}
                      {w.running.length ? (
                        <ul className="worker-runs" aria-label={`Runs on ${w.name}`}>
                          {w.running.map((id) => (
                            <li key={id}>
                              <Link href={`/runs/${id}`}>
                                <code>{id}</code>
                              </Link>
                            </li>
                          ))}
                        </ul>
                      ) : null}
                    </td>
                    <td>
                      <Time at={w.last_heartbeat} />
                    </td>
                    <td>
                      <Time at={w.started_at} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </>
  );
}
