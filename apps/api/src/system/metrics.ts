import type { Database } from '@baton/db';
import client from 'prom-client';

/** What /metrics reads from the database when Prometheus scrapes. */
export interface Gauges {
  usersByRole(): Promise<Record<string, number>>;
  auditEntries(): Promise<number>;
  runsByStatus(): Promise<Record<string, number>>;
}

/** The gauges of a database: the one definition `baton serve` and the test harness share. */
export function databaseGauges(db: Pick<Database, 'repos'>): Gauges {
  return {
    usersByRole: () => db.repos.users.countByRole(),
    auditEntries: async () => (await db.repos.audit.head()).seq,
    runsByStatus: () => db.repos.runs.countByStatus(),
  };
}

const RUN_STATUSES = ['pending', 'held', 'waiting', 'running', 'finished'] as const;

export interface HttpMetrics {
  observe(method: string, route: string, status: number, seconds: number): void;
}

/**
 * One registry per app instance (no global default registry): process metrics, HTTP metrics, and Baton
 * gauges read when Prometheus scrapes.
 */
export function createMetrics(gauges: Gauges) {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, prefix: 'baton_process_' });

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
  new client.Gauge({
    name: 'baton_users',
    help: 'User accounts by role',
    labelNames: ['role'],
    registers: [registry],
    async collect() {
      const counts = await gauges.usersByRole();
      for (const role of ['admin', 'operator', 'viewer']) this.set({ role }, counts[role] ?? 0);
    },
  });
  new client.Gauge({
    name: 'baton_audit_entries',
    help: 'Entries in the audit chain',
    registers: [registry],
    async collect() {
      this.set(await gauges.auditEntries());
    },
  });
  new client.Gauge({
    name: 'baton_runs',
    help: 'Runs (shards and splits included) by status',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      const counts = await gauges.runsByStatus();
      for (const status of RUN_STATUSES) this.set({ status }, counts[status] ?? 0);
    },
  });

  const http: HttpMetrics = {
    observe(method, route, status, seconds) {
      requests.inc({ method, route, status: String(status) });
      duration.observe({ method, route }, seconds);
    },
  };
  return { registry, http };
}
export type Metrics = ReturnType<typeof createMetrics>;
