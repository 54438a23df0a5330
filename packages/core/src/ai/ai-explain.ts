// POST /v1/runs/{id}/explain: why a run ended as it did, from its failed results, per-host outcomes, the log around
// the failures and its task list. Kept per run; ?refresh=true asks again. Every cited event exists in the run.
import { type RunExplanation, storableText, answerFormat, ExplainAnswer } from '@baton/contracts';
import type { AiExplanationRow, AiRepo, RunEventRepo, RunRepo, RunRow } from '@baton/db';
import type { Principal } from '../authz/authorize.js';
import { type Clock, iso } from '../common/clock.js';
import { ConflictError } from '../common/errors.js';
import type { RunAccess } from '../runs/run-access.js';
import type { RunOutputService } from '../runs/run-output.service.js';
import type { AiCaller } from './ai-call.js';
import { bounded, buildRequest, createRedactor } from './ai-prompt.js';

/** Failed results described one by one; log excerpts around the first few of them. */
const MAX_FAILURES = 30;
const MAX_EXCERPTS = 8;
const LINES_BEFORE = 15;
const LINES_AFTER = 10;
const MAX_EXCERPT_CHARS = 6000;
const MAX_HOSTS = 200;
const MAX_TASKS = 200;

export interface ExplainDeps {
  caller: AiCaller;
  access: Pick<RunAccess, 'visibleRun'>;
  runs: Pick<RunRepo, 'taskResultsOf' | 'hostsOf' | 'children'>;
  runEvents: Pick<RunEventRepo, 'list'>;
  output: Pick<RunOutputService, 'logLines'>;
  ai: Pick<AiRepo, 'explanation' | 'putExplanation'>;
  /** every secret value the run was given (credential fields, survey passwords, its trigger's secret) */
  secretsOf: (run: RunRow) => Promise<string[]>;
  clock: Clock;
}

const INSTRUCTIONS = [
  'Explain why this Ansible run ended as it did, for the operator who has to fix it.',
  'summary: two or three sentences. likely_causes: the most likely causes, most likely first. suggested_fixes: concrete steps (a task, a variable, a host to check).',
  'cited_events: the `seq` numbers of the events (failed results, log excerpts) your explanation rests on; only seq numbers that appear in the data.',
].join('\n');

export function createExplainer(deps: ExplainDeps) {
  /** The event's log line range, so the UI can link a citation to the log. */
  async function lineRange(runId: string, seq: number) {
    const [event] = await deps.runEvents.list(runId, { afterSeq: seq - 1, limit: 1 });
    const data = event?.seq === seq ? event.data : {};
    const line = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) ? v : null);
    return { seq, start_line: line(data.start_line), end_line: line(data.end_line) };
  }

  async function view(row: AiExplanationRow, cached: boolean): Promise<RunExplanation> {
    return {
      ...row,
      cached,
      cited_lines: await Promise.all(row.cited_events.map((seq) => lineRange(row.run_id, seq))),
    };
  }

  async function material(p: Principal, run: RunRow) {
    const results = await deps.runs.taskResultsOf(run.id);
    const failures = results.filter((r) => r.status === 'failed' || r.status === 'unreachable');
    const tasks = [...new Map(results.map((r) => [r.task_path ?? r.task, r])).values()]
      .slice(0, MAX_TASKS)
      .map((r) => ({ task: r.task, path: r.task_path, action: r.action }));
    const hosts = (await deps.runs.hostsOf(run.id))
      .sort((a, b) => Number(b.failed + b.unreachable > 0) - Number(a.failed + a.unreachable > 0))
      .slice(0, MAX_HOSTS)
      .map((h) => ({
        host: h.host,
        outcome: h.outcome,
        ok: h.ok,
        changed: h.changed,
        failed: h.failed,
        unreachable: h.unreachable,
      }));
    const excerpts = [];
    for (const f of failures.slice(0, MAX_EXCERPTS)) {
      const range = await lineRange(run.id, f.seq);
      if (range.start_line === null) continue;
      const offset = Math.max(0, range.start_line - 1 - LINES_BEFORE);
      const end = (range.end_line ?? range.start_line) + LINES_AFTER;
      const { text } = await deps.output.logLines(p, run.id, { offset, limit: end - offset });
      const numbered = text
        .split('\n')
        .filter((l, i, all) => i < all.length - 1 || l !== '')
        .map((l, i) => `${offset + 1 + i}: ${l}`)
        .join('\n');
      excerpts.push({ seq: f.seq, host: f.host, task: f.task, lines: bounded(numbered, MAX_EXCERPT_CHARS) });
    }
    const children =
      run.kind === 'split' || run.kind === 'pipeline'
        ? (await deps.runs.children(run.id)).map((c) => ({
            id: c.id,
            kind: c.kind,
            status: c.status,
            conclusion: c.conclusion,
            reason: c.reason,
          }))
        : [];
    return [
      [
        'run',
        {
          id: run.id,
          kind: run.kind,
          status: run.status,
          conclusion: run.conclusion,
          reason: run.reason,
          playbook: run.playbook,
          project_id: run.project_id,
          commit: run.git_commit,
          check: run.check_mode === 1,
          limit: run.host_limit,
          exit_code: run.exit_code,
          // Names only: values may be secrets a survey or a caller passed.
          extra_var_names: Object.keys(run.extra_vars ?? {}),
          started_at: run.started_at,
          finished_at: run.finished_at,
        },
      ],
      ['hosts', hosts],
      ['tasks', tasks],
      [
        'failed-results',
        // A no_log result's message is already a fixed text (the ingester never keeps its output).
        failures.slice(0, MAX_FAILURES).map((f) => ({
          seq: f.seq,
          host: f.host,
          task: f.task,
          path: f.task_path,
          action: f.action,
          status: f.status,
          message: f.no_log === 1 ? 'the output has been hidden (no_log)' : f.message,
        })),
      ],
      ['log-excerpts', excerpts],
      ...(children.length ? ([['child-runs', children]] as const) : []),
    ] as const;
  }

  return {
    async explain(p: Principal, runId: string, refresh: boolean): Promise<RunExplanation> {
      const settings = await deps.caller.requireConfigured();
      const run = await deps.access.visibleRun(p, runId);
      if (!refresh) {
        const stored = await deps.ai.explanation(runId);
        if (stored) return view(stored, true);
      }
      if (run.status !== 'finished')
        throw new ConflictError(`run ${runId} is ${run.status}: it can be explained once it has finished`);
      const request = buildRequest({
        purpose: 'explain',
        instructions: INSTRUCTIONS,
        parts: await material(p, run),
        answer: answerFormat('run_explanation', 'An explanation of an Ansible run', ExplainAnswer),
        redact: createRedactor(await deps.secretsOf(run)),
      });
      const { value, model } = await deps.caller.call(p, settings, request, ExplainAnswer, run.id);
      const row: AiExplanationRow = {
        run_id: run.id,
        // Stored as it will read back: text no database keeps as given (lone surrogates) made storable first.
        summary: storableText(value.summary),
        likely_causes: value.likely_causes.map(storableText),
        suggested_fixes: value.suggested_fixes.map(storableText),
        // Only events the run has (seqs are gap-free from 1), each once, in order.
        cited_events: [...new Set(value.cited_events)].filter((s) => s >= 1 && s <= run.last_seq).sort((a, b) => a - b),
        model,
        generated_at: iso(deps.clock()),
      };
      await deps.ai.putExplanation(row);
      return view(row, false);
    },
  };
}
