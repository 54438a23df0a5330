// What the run ingester observes as it stores events and finishes runs, as Prometheus metrics. Counted where it
// happens, after commit (nothing is read from the database at scrape): in queue mode each API replica counts what it
// ingests, and Prometheus sums over the instances.
import { RunConclusion, RunOrigin } from '@baton/contracts';
import type { RunRow } from '@baton/db';
import client from 'prom-client';

/** From seconds to hours: a ping of a few hosts up to a long rollout. */
const RUN_DURATION_BUCKETS = [1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400];
/** From an idle executor taking a run at once to a backlog of an hour. */
const DISPATCH_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 3600];

const CONCLUSIONS: readonly string[] = RunConclusion.options;
const ORIGINS: readonly string[] = RunOrigin.options;

/** A label value from a known set; anything else is `other`, so the number of series stays bounded. */
const bounded = (value: string | null, known: readonly string[]): string =>
  value !== null && known.includes(value) ? value : 'other';

/** Seconds from `from` to `to`; never negative (a worker's clock may run behind the API's). */
function secondsBetween(from: string | null, to: string | null): number | undefined {
  if (from === null || to === null) return undefined;
  const ms = Date.parse(to) - Date.parse(from);
  return Number.isFinite(ms) ? Math.max(0, ms) / 1000 : undefined;
}

export interface RunMetrics {
  /** Registered by each app's registry (createMetrics); they belong to no registry themselves. */
  readonly metrics: readonly client.Metric[];
  /** The ingester's onStored: events newly stored. */
  onStored(count: number): void;
  /** The ingester's onFinished: runs it moved to finished, as stored. */
  onFinished(rows: readonly RunRow[]): void;
}

export function createRunMetrics(): RunMetrics {
  const finished = new client.Counter({
    name: 'baton_runs_finished_total',
    help: 'Runs finished, by conclusion and origin; top-level runs only (a split or a pipeline counts once, its shards and steps not)',
    labelNames: ['conclusion', 'origin'],
    registers: [],
  });
  const duration = new client.Histogram({
    name: 'baton_run_duration_seconds',
    help: 'From start to finish of the top-level runs that started, by conclusion; observed when they finish',
    labelNames: ['conclusion'],
    buckets: RUN_DURATION_BUCKETS,
    registers: [],
  });
  const dispatch = new client.Histogram({
    name: 'baton_run_dispatch_latency_seconds',
    help:
      'How long a run waited for an executor, from creation to start; runs never held for approval, not shards or ' +
      'pipeline steps (they wait on their parent); observed when they finish',
    buckets: DISPATCH_BUCKETS,
    registers: [],
  });
  const ingested = new client.Counter({
    name: 'baton_run_events_ingested_total',
    help: 'Run events stored by this instance (executor events and the status events of runs it finished)',
    registers: [],
  });
  // Every known series from the start: a rate over a series that appears only with its first increment misses it.
  for (const conclusion of CONCLUSIONS) {
    for (const origin of ORIGINS) finished.inc({ conclusion, origin }, 0);
    duration.zero({ conclusion });
  }

  return {
    metrics: [finished, duration, dispatch, ingested],
    onStored(count) {
      if (count > 0) ingested.inc(count);
    },
    onFinished(rows) {
      for (const row of rows) {
        if (row.parent_id !== null) continue;
        const conclusion = bounded(row.conclusion, CONCLUSIONS);
        finished.inc({ conclusion, origin: bounded(row.origin, ORIGINS) });
        const ran = secondsBetween(row.started_at, row.finished_at);
        if (ran !== undefined) duration.observe({ conclusion }, ran);
        const waited =
          row.kind === 'run' && row.held_by === null ? secondsBetween(row.created_at, row.started_at) : undefined;
        if (waited !== undefined) dispatch.observe(waited);
      }
    },
  };
}
