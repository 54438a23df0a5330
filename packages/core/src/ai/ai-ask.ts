// POST /v1/ai/ask: a fleet question answered from metadata the caller may see. The material is read through the same
// services (and so the same grants) as the caller's own requests, before the prompt is built; a citation of anything
// not in it is dropped. Rate limited per user across replicas.
import {
  type AskAnswer,
  type AskBody,
  DriftQuery,
  FleetQuery,
  RunListQuery,
  storableText,
  TaskTrendQuery,
  answerFormat,
  AskModelAnswer,
} from '@baton/contracts';
import type { Principal } from '../authz/authorize.js';
import { RateLimitedError } from '../common/errors.js';
import type { DriftService } from '../observation/drift.service.js';
import type { FleetService } from '../observation/fleet.service.js';
import type { TaskTrendService } from '../observation/task-trend.service.js';
import type { RunService } from '../runs/run.service.js';
import type { AiCaller } from './ai-call.js';
import { buildRequest, createRedactor } from './ai-prompt.js';

export interface AskDeps {
  caller: AiCaller;
  /** 0 when the user may ask now (and counts it), else the seconds to wait */
  rateLimit: { take(key: string): Promise<number> };
  runs: Pick<RunService, 'list'>;
  fleet: Pick<FleetService, 'fleet'>;
  drift: Pick<DriftService, 'drift'>;
  tasks: Pick<TaskTrendService, 'tasks'>;
}

const INSTRUCTIONS = [
  "Answer the operator's question about their Ansible fleet using only the data given: recent runs, fleet health per host, open drift and task duration trends.",
  'If the data does not answer it, say so. Be brief and concrete.',
  'citations: what the answer rests on, as {kind, id}: kind `run` with a run id, `host` with a host name, `drift` with a drift item id, `task` with a task key; only ids that appear in the data.',
].join('\n');

export function createAsker(deps: AskDeps) {
  return {
    async ask(p: Principal, body: AskBody): Promise<AskAnswer> {
      const settings = await deps.caller.requireConfigured();
      const wait = await deps.rateLimit.take(p.id);
      if (wait > 0) throw new RateLimitedError(`too many questions: ask again in ${wait} s`, wait);

      const [runs, fleet, drift, tasks] = await Promise.all([
        deps.runs.list(p, RunListQuery.parse({ limit: '50' })),
        deps.fleet.fleet(p, FleetQuery.parse({ limit: '50' })),
        deps.drift.drift(p, DriftQuery.parse({ limit: '50' })),
        deps.tasks.tasks(p, TaskTrendQuery.parse({ limit: '30' })),
      ]);
      const runRows = runs.items.map((r) => ({
        id: r.id,
        playbook: r.playbook,
        project_id: r.project_id,
        inventory_id: r.inventory_id,
        origin: r.origin,
        status: r.status,
        conclusion: r.conclusion,
        reason: r.reason,
        check: r.check,
        hosts: r.host_summary,
        created_at: r.created_at,
        finished_at: r.finished_at,
      }));
      const hostRows = fleet.items.map((h) => ({
        host: h.host,
        runs: h.runs,
        failed: h.failed,
        unreachable: h.unreachable,
        failure_rate: h.failure_rate,
        last_outcome: h.last_outcome,
        last_run_id: h.last_run_id,
        flaky: h.flaky,
        flaky_reason: h.flaky_reason,
      }));
      // Drift without its diffs: they hold file contents, and the question is about the fleet, not one file.
      const driftRows = drift.items.map((d) => ({
        id: d.id,
        host: d.host,
        playbook: d.playbook,
        task: d.task,
        item: d.item,
        found_in_run_id: d.found_in_run_id,
        found_at: d.found_at,
      }));
      const taskRows = tasks.items.map((t) => ({
        key: t.key,
        task: t.task,
        playbook: t.playbook,
        p50_s: t.p50_s,
        p95_s: t.p95_s,
        trend_pct: t.trend_pct,
        slowest_hosts: t.slowest_hosts,
      }));
      const known = {
        run: new Set([
          ...runRows.map((r) => r.id),
          ...hostRows.map((h) => h.last_run_id),
          ...driftRows.map((d) => d.found_in_run_id),
        ]),
        host: new Set([...hostRows.map((h) => h.host), ...driftRows.map((d) => d.host)]),
        drift: new Set(driftRows.map((d) => d.id)),
        task: new Set(taskRows.map((t) => t.key)),
      };

      const request = buildRequest({
        purpose: 'ask',
        instructions: INSTRUCTIONS,
        parts: [
          ['question', body.question],
          ['recent-runs', runRows],
          ['fleet-health', hostRows],
          ['open-drift', driftRows],
          ['task-trends', taskRows],
        ],
        answer: answerFormat('fleet_answer', 'An answer to a question about the fleet', AskModelAnswer),
        redact: createRedactor([]),
      });
      const { value } = await deps.caller.call(p, settings, request, AskModelAnswer);
      const seen = new Set<string>();
      const citations = value.citations.filter((c) => {
        const key = `${c.kind}\u0000${c.id}`;
        if (!known[c.kind].has(c.id) || seen.has(key)) return false;
        seen.add(key);
        return true;
      });
      return { answer: storableText(value.answer), citations };
    },
  };
}
