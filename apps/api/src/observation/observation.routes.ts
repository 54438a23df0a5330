import {
  DriftItem,
  DriftQuery,
  FixedDriftItem,
  FLAKY_RULE,
  FleetHost,
  FleetQuery,
  HostParams,
  HostRun,
  HostRunsQuery,
  ReconcileBody,
  ReconcileResult,
  RunIdParams,
  TaskDetail,
  TaskHistoryQuery,
  TaskKeyParams,
  TaskTrend,
  TaskTrendQuery,
  UnassessedHost,
} from '@baton/contracts';
import { NotFoundError } from '@baton/core';
import { z } from 'zod';
import { pageReply } from '../http/paging.js';
import { defineOperation, type Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';

const ROLLUPS =
  'Read from rollups the ingester keeps in the transaction that finishes each run, so the cost follows the window and the number of hosts or tasks, not the length of the history. Only runs the caller may see count.';

export function observationRoutes(s: Pick<Services, 'fleet' | 'taskTrends' | 'drift'>): Operation[] {
  return [
    defineOperation({
      operationId: 'listFleet',
      method: 'get',
      path: '/fleet',
      tag: 'observation',
      auth: 'user',
      legacy: true,
      summary: 'Hosts ranked by failures over their recent runs, with flaky hosts flagged.',
      description: `Each host's last \`window\` runs (matching the filters) give its counts of runs per outcome and its failure rate; hosts are ranked by failed + unreachable runs, then failure rate, then most recently seen. ${FLAKY_RULE} ${ROLLUPS}`,
      query: FleetQuery,
      responses: { 200: { description: 'Hosts, most failures first', schema: z.array(FleetHost) } },
      async handle({ principal, query, req }) {
        return pageReply(req, await s.fleet.fleet(principal, query));
      },
    }),
    defineOperation({
      operationId: 'listHostRuns',
      method: 'get',
      path: '/hosts/{host}/runs',
      tag: 'observation',
      auth: 'user',
      legacy: true,
      summary: "One host's per-run outcomes, newest first, with the tasks that failed there.",
      description: `The host name is percent-encoded in the path (dots, dashes, brackets of IPv6 addresses and unicode are all fine). ${ROLLUPS}`,
      params: HostParams,
      query: HostRunsQuery,
      responses: {
        200: { description: 'Runs of the host', schema: z.array(HostRun) },
        404: { description: 'No run the caller may see reported on this host' },
      },
      async handle({ principal, params, query, req }) {
        return pageReply(req, await s.fleet.hostRuns(principal, params.host, query));
      },
    }),
    defineOperation({
      operationId: 'listTaskTrends',
      method: 'get',
      path: '/tasks',
      tag: 'observation',
      auth: 'user',
      legacy: true,
      summary:
        'Task duration trends: per task (playbook + task path), its durations over its last runs, slowest p95 first.',
      description: `A task's duration in a run is its longest host's (what the play waits for; slowest_hosts gives each host's median). trend_pct compares the median of the newer half of the window with the older half. With \`host\`: that host's durations over its last \`window\` runs. ${ROLLUPS}`,
      query: TaskTrendQuery,
      responses: { 200: { description: 'Tasks, slowest p95 first', schema: z.array(TaskTrend) } },
      async handle({ principal, query, req }) {
        return pageReply(req, await s.taskTrends.tasks(principal, query));
      },
    }),
    defineOperation({
      operationId: 'getTaskTrend',
      method: 'get',
      path: '/tasks/{key}',
      tag: 'observation',
      auth: 'user',
      legacy: true,
      summary: "One task's trend and its durations over time (for a chart).",
      params: TaskKeyParams,
      query: TaskHistoryQuery,
      responses: {
        200: { description: 'The task', schema: TaskDetail },
        404: { description: 'No run the caller may see ran a task with this key' },
      },
      async handle({ principal, params, query }) {
        const task = await s.taskTrends.task(principal, params.key, query);
        if (!task) throw new NotFoundError(`task ${params.key} not found`);
        return { status: 200, body: task };
      },
    }),
    defineOperation({
      operationId: 'listDrift',
      method: 'get',
      path: '/drift',
      tag: 'observation',
      auth: 'user',
      legacy: true,
      summary: 'Resources drifting from their desired state, newest finding first.',
      description: `From the latest dry run (check: true) per inventory, playbook and host: every changed result (each changed loop item) is a drifting resource, with the diff --check --diff reported (never for no_log tasks). A later dry run or real run of the same playbook that shows the resource unchanged clears it; a real run that changes it fixes it. Hosts that could not be assessed are at GET /v1/drift/unassessed. ${ROLLUPS}`,
      query: DriftQuery,
      responses: { 200: { description: 'Drifting resources', schema: z.array(DriftItem) } },
      async handle({ principal, query, req }) {
        return pageReply(req, await s.drift.drift(principal, query));
      },
    }),
    defineOperation({
      operationId: 'listUnassessedHosts',
      method: 'get',
      path: '/drift/unassessed',
      tag: 'observation',
      auth: 'user',
      summary:
        'Hosts the latest dry run of their inventory and playbook could not assess (failed, unreachable, tasks skipped in check mode), with the reason.',
      query: DriftQuery,
      responses: { 200: { description: 'Hosts not assessed', schema: z.array(UnassessedHost) } },
      async handle({ principal, query, req }) {
        return pageReply(req, await s.drift.unassessed(principal, query));
      },
    }),
    defineOperation({
      operationId: 'reconcileDrift',
      method: 'post',
      path: '/drift/reconcile',
      tag: 'observation',
      auth: 'user',
      summary: 'Propose a run that fixes a host’s drift: always held for approval.',
      description:
        'A run of the same playbook, commit, inventory, credentials and variables as the dry run that found the drift, limited to the host, not in check mode, origin reconcile, held for approval whatever the policies say; the drift it should fix links to it (reconcile_run_id), and each resource links to the run that fixed it once that run finishes (GET /v1/runs/{id}/drift). Needs the operator or admin role and use on the objects the run references.',
      body: ReconcileBody,
      responses: {
        201: { description: 'The held run and the drift it should fix', schema: ReconcileResult },
        403: { description: 'Viewer role, or no use grant on an object the run references' },
        409: {
          description:
            'No drift the caller may see on that host, or drift under several playbooks or inventories and no choice in the body',
        },
      },
      async handle({ principal, body }) {
        const result = await s.drift.reconcile(principal, body);
        return { status: 201, body: result, headers: { Location: `/v1/runs/${result.run.id}` } };
      },
    }),
    defineOperation({
      operationId: 'listRunDrift',
      method: 'get',
      path: '/runs/{id}/drift',
      tag: 'observation',
      auth: 'user',
      summary:
        'The drift a reconcile run was proposed to fix, and what became of each resource (empty for other runs).',
      params: RunIdParams,
      responses: { 200: { description: 'Drift items', schema: z.array(FixedDriftItem) } },
      async handle({ principal, params }) {
        return { status: 200, body: await s.drift.ofRun(principal, params.id) };
      },
    }),
  ];
}
