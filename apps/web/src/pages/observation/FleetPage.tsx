// /fleet — hosts ranked by failures over their recent runs, flaky ones flagged; the filters live in the address.
import type { FleetHost } from '@baton/contracts';
import { Link } from 'wouter';
import { qs } from '../../api/client';
import { usePagedList } from '../../api/hooks';
import { EmptyState, NoMatches, PageHeader } from '../../ui/layout';
import { FleetAskBox } from '../ai/FleetAskBox';
import { NumericHeads, PagedTable } from '../../ui/PagedTable';
import { OutcomeBadge } from '../../ui/Status';
import { Time } from '../../ui/Time';
import { useInventories, useProjects } from '../runs/lookups';
import { FilterBar, PLAYBOOK_FILTER } from './FilterControls';
import { hostPath, useUrlFilters } from './filters';
import { FlakyBadge } from './FlakyBadge';
import { percent } from './format';
import './observation.css';

const KEYS = ['inventory', 'project', 'playbook', 'window', 'flaky'] as const;
/** The API's default and bounds for `window` (FleetQuery). */
const DEFAULT_WINDOW = 20;
const MAX_WINDOW = 200;
const REFRESH_MS = 15_000;

export default function FleetPage() {
  const filters = useUrlFilters(KEYS);
  const f = filters.values;
  const list = usePagedList<FleetHost>(`/v1/fleet${qs(f)}`, { refetchInterval: REFRESH_MS });
  const projects = useProjects();
  const inventories = useInventories();
  const windowRuns = f.window ?? String(DEFAULT_WINDOW);

  return (
    <>
      <PageHeader
        title="Fleet"
        subtitle={`Hosts ranked by failed and unreachable runs over each host's last ${windowRuns === '1' ? 'run' : `${windowRuns} runs`}. Refreshed every ${REFRESH_MS / 1000} s.`}
      />
      <FleetAskBox />
      <FilterBar
        label="Filter hosts"
        filters={filters}
        error={list.error}
        fields={[
          { kind: 'named', name: 'inventory', label: 'Inventory', items: inventories.items },
          { kind: 'named', name: 'project', label: 'Project', items: projects.items },
          PLAYBOOK_FILTER,
          {
            kind: 'text',
            name: 'window',
            label: 'Window (runs per host)',
            type: 'number',
            min: 1,
            max: MAX_WINDOW,
            placeholder: String(DEFAULT_WINDOW),
          },
          { kind: 'check', name: 'flaky', label: 'Flaky hosts only' },
        ]}
      />
      <p className="muted obs-note">
        <strong>Flaky</strong>: for the same playbook and inventory, the host&apos;s outcome flipped between success and
        failure at least twice within the window while its failure rate stayed between 10% and 90%.
      </p>
      <PagedTable
        list={list}
        what="Loading hosts"
        caption="Hosts, most failures first"
        className="fleet-table"
        testId="fleet"
        empty={
          filters.any ? (
            <NoMatches what="hosts" onClear={filters.clear} />
          ) : (
            <EmptyState title="No host has run anything yet">
              Hosts appear here once a run you may see has finished on them: <Link href="/runs/new">submit a run</Link>{' '}
              or launch a <Link href="/templates">template</Link>.
            </EmptyState>
          )
        }
        head={
          <>
            <th scope="col">Host</th>
            <NumericHeads labels={['Runs', 'OK', 'Changed', 'Failed', 'Unreachable', 'Failure rate']} />
            <th scope="col">Last outcome</th>
            <th scope="col">Last seen</th>
            <th scope="col">Flaky</th>
          </>
        }
        row={(h) => <FleetRow key={h.host} host={h} />}
      />
    </>
  );
}

function FleetRow({ host: h }: { host: FleetHost }) {
  return (
    <tr data-host={h.host}>
      <th scope="row">
        <Link href={hostPath(h.host)} className="mono">
          {h.host}
        </Link>
      </th>
      <td className="num">{h.runs}</td>
      <td className="num">{h.ok}</td>
      <td className="num">{h.changed}</td>
      <td className={`num${h.failed ? ' obs-bad' : ''}`}>{h.failed}</td>
      <td className={`num${h.unreachable ? ' obs-bad' : ''}`}>{h.unreachable}</td>
      <td className="num">
        <RateBar rate={h.failure_rate} />
      </td>
      <td>
        <span className="obs-outcome">
          <OutcomeBadge outcome={h.last_outcome} />
          <Link href={`/runs/${h.last_run_id}`} className="mono obs-run-link" title={h.last_run_id}>
            {h.last_run_id}
          </Link>
        </span>
      </td>
      <td>
        <Time at={h.last_seen_at} />
      </td>
      <td>{h.flaky ? <FlakyBadge reason={h.flaky_reason} /> : <span className="muted">no</span>}</td>
    </tr>
  );
}

/** The rate as a number, with a small bar beside it (the number says it; the bar only helps scanning). */
function RateBar({ rate }: { rate: number }) {
  const tone = rate === 0 ? 'ok' : rate >= 0.5 ? 'bad' : 'warn';
  return (
    <span className="rate" data-rate={rate}>
      <span className="rate-track" aria-hidden="true">
        <span className={`rate-fill rate-${tone}`} style={{ width: `${Math.round(rate * 100)}%` }} />
      </span>
      {percent(rate)}
    </span>
  );
}
