// The single writer of run events and, after submit, of run status (ARCHITECTURE.md, "A run's path" steps 4–5):
// executor events are buffered, persisted in batches (one transaction each), and published only after commit,
// so nothing is live before it is in the database.
import type { RunConclusion, RunEvent, RunStatus } from '@baton/contracts';
import type { RunEventRow, RunRepo, RunRow, RunTaskResultRow } from '@baton/db';
import { type Clock, iso } from '../common/clock.js';
import { appendStatusEvent, str, toEventRow, toTaskResultRow } from './run-ingest.rows.js';
import { aggregateParentFinish, normalizeStats, type SplitTx, startParent } from './run-split.js';
import { toRunHostRows } from './run.view.js';

export interface RunIngester {
  /** Buffers one executor event (synchronous; executors call it from runPlaybook's onEvent). Persisted in batches. */
  push(event: RunEvent): void;
  /** Resolves once everything pushed so far is persisted AND published. Rejects if persisting failed. */
  flush(): Promise<void>;
  /**
   * Executor claims a pending run before starting ansible: CAS pending→running, worker, started_at. False: not
   * pending (canceled meanwhile) → do not run it. Moves a pending split parent to running (with a parent status event).
   */
  claim(runId: string, worker: string): Promise<boolean>;
  /**
   * API-side end of a run no executor will finish (cancel of a pending/held run, worker_lost, a bundle that cannot be built):
   * first persists that run's buffered events, then in one transaction CAS status ∈ from → finished with conclusion, reason and
   * finished_at, appends a `status` event {status: 'finished', conclusion, reason} with seq = last_seq + 1, aggregates the
   * parent; publishes after commit. False when the run was not in one of `from`.
   */
  finish(runId: string, outcome: { conclusion: RunConclusion; reason?: string }, from: readonly RunStatus[]): Promise<boolean>;
  /** Flushes and stops the timer; pushing afterwards throws. */
  close(): Promise<void>;
}

export type IngestTx = SplitTx & { runs: SplitTx['runs'] & Pick<RunRepo, 'findMany' | 'insertTaskResults'> };

export interface RunIngesterDeps {
  transaction: <T>(fn: (r: IngestTx) => Promise<T>) => Promise<T>;
  /** The EventBus, structurally. */
  publish: (event: RunEvent) => Promise<void>;
  clock: Clock;
  /** Persist failures (flush rejects with them too) and publish failures (the events are stored; SSE clients catch up from the DB). */
  onError?: (err: unknown) => void;
  batchSize?: number;
  flushIntervalMs?: number;
}

/** What the ingester keeps of a run between batches; seeded from its row the first time the run is seen. */
interface RunState {
  lastSeq: number;
  logLines: number;
  logBytes: number;
  parentId: string | null;
}

const TASK_RESULT_STATUS: Record<string, string> = {
  runner_on_ok: 'ok', runner_on_failed: 'failed', runner_on_skipped: 'skipped', runner_on_unreachable: 'unreachable',
};
const CONCLUSIONS: readonly string[] = ['succeeded', 'failed', 'canceled', 'rejected', 'error'];

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function seedState(row: RunRow | undefined): RunState {
  // An unknown run seeds zeros: its events then break the foreign key and the batch reports that.
  return row ? { lastSeq: row.last_seq, logLines: row.log_lines, logBytes: row.log_bytes, parentId: row.parent_id } : { lastSeq: 0, logLines: 0, logBytes: 0, parentId: null };
}

function groupByRun(events: RunEvent[]): Map<string, RunEvent[]> {
  const byRun = new Map<string, RunEvent[]>();
  for (const e of events) {
    const list = byRun.get(e.run_id);
    if (list) list.push(e);
    else byRun.set(e.run_id, [e]);
  }
  return byRun;
}

/** `status: running` from an executor: an idempotent CAS pending→running (its claim usually did it already). */
async function applyRunning(r: IngestTx, e: RunEvent, parentId: string | null): Promise<RunEvent[]> {
  const worker = str(e.data.worker);
  await r.runs.transition(e.run_id, ['pending'], { status: 'running', started_at: e.ts, ...(worker ? { worker } : {}) });
  return parentId ? startParent(r, parentId, e.ts) : [];
}

/** `status: finished` from an executor; a run already finished (say worker_lost came first) is left as it is. */
async function applyFinished(r: IngestTx, e: RunEvent, parentId: string | null): Promise<RunEvent[]> {
  const conclusion = str(e.data.conclusion);
  const stats = isRecord(e.data.stats) ? normalizeStats(e.data.stats) : null;
  const exitCode = e.data.exit_code;
  const finish = async (): Promise<boolean> => {
    const moved = await r.runs.transition(e.run_id, ['running', 'pending'], {
      status: 'finished',
      conclusion: conclusion && CONCLUSIONS.includes(conclusion) ? conclusion : 'error',
      reason: str(e.data.reason) ?? null,
      exit_code: typeof exitCode === 'number' && Number.isInteger(exitCode) ? exitCode : null,
      stats: stats ? JSON.stringify(stats) : null,
      finished_at: e.ts,
    });
    if (moved && stats) await r.runs.replaceHosts(e.run_id, toRunHostRows(e.run_id, stats));
    return moved;
  };
  if (parentId) return aggregateParentFinish(r, parentId, finish, e.ts);
  await finish();
  return [];
}

export function createRunIngester(deps: RunIngesterDeps): RunIngester {
  const batchSize = deps.batchSize ?? 500;
  const flushIntervalMs = deps.flushIntervalMs ?? 25;
  const onError = deps.onError ?? (() => {});
  const states = new Map<string, RunState>();
  let buffer: RunEvent[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let drainQueued = false;
  let closed = false;
  // Jobs (drains and API-side finishes) run one at a time in order, so a finish comes after every event pushed before it.
  let tail: Promise<unknown> = Promise.resolve();
  // A flush rejects when a persist failed that no flush started earlier has reported yet.
  let failures = 0;
  let reportedFailures = 0;
  let lastFailure: unknown;

  function enqueue<T>(job: () => Promise<T>): Promise<T> {
    const result = tail.then(job);
    tail = result.catch(() => {});
    return result;
  }

  async function publishAll(events: RunEvent[]): Promise<void> {
    for (const e of events) await deps.publish(e).catch(onError);
  }

  /** Queues a drain of whatever is buffered when it starts, unless one is queued and not started yet. */
  function scheduleDrain(): void {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (drainQueued) return;
    drainQueued = true;
    void enqueue(async () => {
      drainQueued = false;
      const events = buffer;
      buffer = [];
      for (let i = 0; i < events.length; i += batchSize) await persistBatch(events.slice(i, i + batchSize));
    });
  }

  function recordFailure(err: unknown, runId: string): void {
    const error = new Error(`persisting events of run ${runId} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    failures += 1;
    lastFailure = error;
    onError(error);
  }

  /** One transaction per batch; if it fails, each run's events are tried alone, so one bad run does not sink the others. */
  async function persistBatch(batch: RunEvent[]): Promise<void> {
    const byRun = groupByRun(batch);
    try {
      await persistRuns(byRun);
    } catch (err) {
      if (byRun.size === 1) return recordFailure(err, batch[0]!.run_id);
      for (const [runId, events] of byRun) await persistRuns(new Map([[runId, events]])).catch((e: unknown) => recordFailure(e, runId));
    }
  }

  async function persistRuns(byRun: Map<string, RunEvent[]>): Promise<void> {
    const drafts = new Map<string, RunState>();
    const finished: string[] = [];
    const toPublish = await deps.transaction(async (r) => {
      const seeded = new Map((await r.runs.findMany([...byRun.keys()].filter((id) => !states.has(id)))).map((row) => [row.id, row]));
      const eventRows: RunEventRow[] = [];
      const taskRows: RunTaskResultRow[] = [];
      const fresh: RunEvent[] = [];
      for (const [runId, events] of byRun) {
        const draft = { ...(states.get(runId) ?? seedState(seeded.get(runId))) };
        drafts.set(runId, draft);
        for (const e of events) {
          // Already stored (a replayed delivery): not stored or published again.
          if (e.seq <= draft.lastSeq) continue;
          let logByte: number | null = null;
          if (e.kind === 'log') {
            logByte = draft.logBytes;
            draft.logBytes += Buffer.byteLength(str(e.data.text) ?? '', 'utf8');
            if (typeof e.data.end_line === 'number') draft.logLines = Math.max(draft.logLines, e.data.end_line - 1);
          }
          eventRows.push(toEventRow(e, logByte));
          const taskStatus = TASK_RESULT_STATUS[e.kind];
          if (taskStatus) taskRows.push(toTaskResultRow(e, taskStatus));
          draft.lastSeq = e.seq;
          fresh.push(e);
        }
      }
      await r.runEvents.insertBatch(eventRows);
      await r.runs.insertTaskResults(taskRows);
      for (const [runId, d] of drafts) await r.runs.advanceProgress(runId, { lastSeq: d.lastSeq, logLines: d.logLines, logBytes: d.logBytes });
      const parentEvents: RunEvent[] = [];
      for (const e of fresh) {
        if (e.kind !== 'status') continue;
        const parentId = drafts.get(e.run_id)!.parentId;
        if (e.data.status === 'running') parentEvents.push(...(await applyRunning(r, e, parentId)));
        if (e.data.status === 'finished') {
          finished.push(e.run_id);
          parentEvents.push(...(await applyFinished(r, e, parentId)));
        }
      }
      return [...fresh, ...parentEvents];
    });
    for (const [runId, draft] of drafts) states.set(runId, draft);
    // A finished run sends nothing more; a straggler re-seeds from the row and is judged by its last_seq.
    for (const runId of finished) states.delete(runId);
    await publishAll(toPublish);
  }

  async function finishNow(runId: string, outcome: { conclusion: RunConclusion; reason?: string }, from: readonly RunStatus[]): Promise<boolean> {
    const at = iso(deps.clock());
    const data = { status: 'finished', conclusion: outcome.conclusion, ...(outcome.reason ? { reason: outcome.reason } : {}) };
    const events = await deps.transaction(async (r) => {
      const run = await r.runs.findById(runId);
      if (!run) return undefined;
      const own: RunEvent[] = [];
      const finishRun = async (): Promise<boolean> => {
        const moved = await r.runs.transition(runId, from, { status: 'finished', conclusion: outcome.conclusion, reason: outcome.reason ?? null, finished_at: at });
        if (moved) own.push(await appendStatusEvent(r, runId, at, data));
        return moved;
      };
      const parentEvents = run.parent_id ? await aggregateParentFinish(r, run.parent_id, finishRun, at) : await finishRun().then(() => []);
      return own.length > 0 ? [...own, ...parentEvents] : undefined;
    });
    if (!events) return false;
    // The row now holds the status event's seq; events of a lost executor arriving later re-seed from it.
    states.delete(runId);
    await publishAll(events);
    return true;
  }

  async function flush(): Promise<void> {
    const reportedBefore = reportedFailures;
    if (buffer.length > 0) scheduleDrain();
    await tail;
    if (failures > reportedBefore) {
      reportedFailures = Math.max(reportedFailures, failures);
      throw lastFailure;
    }
  }

  return {
    push(event) {
      if (closed) throw new Error('the run ingester is closed');
      buffer.push(event);
      if (buffer.length >= batchSize) scheduleDrain();
      else if (timer === undefined && !drainQueued) {
        timer = setTimeout(scheduleDrain, flushIntervalMs);
        // A pending flush must not keep the process alive; close() flushes what is left.
        timer.unref();
      }
    },

    flush,

    async claim(runId, worker) {
      const at = iso(deps.clock());
      const result = await deps.transaction(async (r) => {
        const run = await r.runs.findById(runId);
        if (!run || !(await r.runs.transition(runId, ['pending'], { status: 'running', worker, started_at: at }))) return undefined;
        return run.parent_id ? startParent(r, run.parent_id, at) : [];
      });
      if (!result) return false;
      await publishAll(result);
      return true;
    },

    finish(runId, outcome, from) {
      if (buffer.some((e) => e.run_id === runId)) scheduleDrain();
      return enqueue(() => finishNow(runId, outcome, from));
    },

    async close() {
      closed = true;
      await flush();
    },
  };
}
