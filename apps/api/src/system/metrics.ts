import { type Clock, freshnessOf, systemClock } from '@baton/core';
import type { Database } from '@baton/db';
import client from 'prom-client';
import type { RunMetrics } from './run-metrics.js';

/**
 * What /metrics reads from the database when Prometheus scrapes: counts only, with label values from fixed sets
 * (never a run id, host or user name). No count of users: who has an account is not the scraper's business.
 */
export interface Gauges {
  auditEntries(): Promise<number>;
  runsByStatus(): Promise<Record<string, number>>;
  /** pending runs an executor runs itself (runs, shards, steps not split) */
  queuedRuns(): Promise<number>;
  /** executors by the freshness GET /v1/workers shows */
  executorsByFreshness(): Promise<Record<string, number>>;
  /** hosts by the outcome of their latest run */
  hostsByLastOutcome(): Promise<Record<string, number>>;
  flakyHosts(): Promise<number>;
  /** resources drifting from their desired state, as the latest dry runs found them */
  driftingResources(): Promise<number>;
}

/** The gauges of a database: the one definition `baton serve` and the test harness share. */
export function databaseGauges(db: Pick<Database, 'repos'>, clock: Clock = systemClock): Gauges {
  return {
    auditEntries: async () => (await db.repos.audit.head()).seq,
    runsByStatus: () => db.repos.runs.countByStatus(),
    queuedRuns: () => db.repos.runs.countQueued(),
    async executorsByFreshness() {
      const now = clock();
      const counts: Record<string, number> = {};
      for (const row of await db.repos.workers.list()) {
        const freshness = freshnessOf(new Date(row.heartbeat_at), now);
        counts[freshness] = (counts[freshness] ?? 0) + 1;
      }
      return counts;
    },
    hostsByLastOutcome: () => db.repos.observation.hostsByLastOutcome(),
    flakyHosts: () => db.repos.observation.flakyHostCount(),
    driftingResources: () => db.repos.observation.openDriftCount(),
  };
}

const RUN_STATUSES = ['pending', 'held', 'waiting', 'running', 'finished'] as const;
const FRESHNESS = ['fresh', 'stale', 'dead'] as const;
const HOST_OUTCOMES = ['ok', 'changed', 'failed', 'unreachable'] as const;

export interface HttpMetrics {
  observe(method: string, route: string, status: number, seconds: number): void;
}

/** Open run event streams (SSE): run-stream.ts calls these as a stream starts and stops. */
export interface StreamMetrics {
  opened(): void;
  closed(): void;
}

/** A gauge with one series per value of a fixed set, read from `counts` at scrape (a value absent there is 0). */
function labelledGauge(
  registry: client.Registry,
  spec: { name: string; help: string; label: string; values: readonly string[] },
  counts: () => Promise<Record<string, number>>,
): void {
  new client.Gauge({
    name: spec.name,
    help: spec.help,
    labelNames: [spec.label],
    registers: [registry],
    async collect() {
      const read = await counts();
      for (const value of spec.values) this.set({ [spec.label]: value }, read[value] ?? 0);
    },
  });
}

function plainGauge(registry: client.Registry, spec: { name: string; help: string }, read: () => Promise<number>) {
  new client.Gauge({
    ...spec,
    registers: [registry],
    async collect() {
      this.set(await read());
    },
  });
}

/**
 * One registry per app instance (no global default registry): process metrics, HTTP metrics, the run ingester's
 * counters and histograms (`runs`, kept by the services), open event streams, and Baton gauges read when
 * Prometheus scrapes.
 */
/** `more`: metrics other domains count (the AI helpers' usage), registered as they are. */
export function createMetrics(gauges: Gauges, runs?: RunMetrics, more: readonly client.Metric[] = []) {
  const registry = new client.Registry();
  // Node's and the process's own metrics: baton_process_cpu_seconds_total, baton_nodejs_eventloop_lag_seconds, …
  // The event loop's delay is sampled every 100 ms, not prom-client's 10: that timer woke an idle server 100 times a
  // second (~6 ms of CPU a second on the 2-core CI machine, over half of all it spent idle). A stall of 100 ms or more
  // is always seen; a shorter one when it spans a sample.
  client.collectDefaultMetrics({ register: registry, prefix: 'baton_', eventLoopMonitoringPrecision: 100 });
  // prom-client also names three gauges `…_total`, which Prometheus keeps for counters (promtool rejects them); their
  // by-type gauges (nodejs_active_handles{type}, …) stay, and sum() gives the totals.
  for (const name of ['active_handles', 'active_requests', 'active_resources'])
    registry.removeSingleMetric(`baton_nodejs_${name}_total`);
  for (const metric of [...(runs?.metrics ?? []), ...more]) registry.registerMetric(metric);

  const requests = new client.Counter({
    name: 'baton_http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const duration = new client.Histogram({
    name: 'baton_http_request_duration_seconds',
    help: 'HTTP request duration',
    labelNames: ['method', 'route'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const subscribers = new client.Gauge({
    name: 'baton_sse_subscribers',
    help: 'Open run event streams (Server-Sent Events clients of GET /v1/runs/{id}/stream) on this instance',
    registers: [registry],
  });
  plainGauge(registry, { name: 'baton_audit_entries', help: 'Entries in the audit chain' }, gauges.auditEntries);
  labelledGauge(
    registry,
    {
      name: 'baton_runs',
      help: 'Runs (shards and splits included) by status',
      label: 'status',
      values: RUN_STATUSES,
    },
    gauges.runsByStatus,
  );
  plainGauge(
    registry,
    {
      name: 'baton_run_queue_depth',
      help:
        'Runs waiting for an executor: pending runs, shards and pipeline steps that an executor runs itself, counted ' +
        'in the database (the same in embedded and queue mode and on every replica; it includes runs the recovery ' +
        'sweep has yet to hand to the queue, which a count of BullMQ jobs would miss)',
    },
    gauges.queuedRuns,
  );
  labelledGauge(
    registry,
    {
      name: 'baton_executors',
      help: 'Executors by heartbeat freshness as GET /v1/workers shows it: fresh up to 15 s since the last heartbeat, stale up to 30 s, then dead (forgotten after a day)',
      label: 'freshness',
      values: FRESHNESS,
    },
    gauges.executorsByFreshness,
  );
  labelledGauge(
    registry,
    {
      name: 'baton_hosts',
      help: 'Hosts by the outcome of their latest run (every host any run reached, whoever ran it)',
      label: 'last_outcome',
      values: HOST_OUTCOMES,
    },
    gauges.hostsByLastOutcome,
  );
  plainGauge(
    registry,
    {
      name: 'baton_flaky_hosts',
      help: 'Hosts flaky over their last 20 runs by the rule of GET /v1/fleet (outcome flipping between success and failure), whoever ran them',
    },
    gauges.flakyHosts,
  );
  plainGauge(
    registry,
    {
      name: 'baton_drifting_resources',
      help: 'Resources drifting from their desired state, as the latest dry runs found them and nothing cleared since (GET /v1/drift)',
    },
    gauges.driftingResources,
  );

  const http: HttpMetrics = {
    observe(method, route, status, seconds) {
      requests.inc({ method, route, status: String(status) });
      duration.observe({ method, route }, seconds);
    },
  };
  const streams: StreamMetrics = {
    opened: () => subscribers.inc(),
    closed: () => subscribers.dec(),
  };
  return { registry, http, streams };
}
export type Metrics = ReturnType<typeof createMetrics>;
