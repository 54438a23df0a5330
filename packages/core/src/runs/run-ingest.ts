// The single writer of run events and, after submit, of run status (ARCHITECTURE.md, "A run's path" steps 4–5):
// executor events are buffered, persisted in batches (one transaction each), and published only after commit,
// so nothing is live before it is in the database.
import type { RunConclusion, RunEvent, RunStatus } from '@baton/contracts';
import type { RunEventRow, RunRepo, RunRow, RunTaskResultRow } from '@baton/db';
import { type Clock, iso } from '../common/clock.js';
import { appendStatusEvent, int, isoOrNull, stripNul, text, toEventRow, toTaskResultRow } from './run-ingest.rows.js';
import { advancePipeline, type ReadySink } from '../pipelines/pipeline-advance.js';
import { finishUnderParent } from './run-parent.js';
import { normalizeStats, type SplitTx, startParent } from './run-split.js';
import { toRunHostRows } from './run.view.js';
import { recordRollups, type RollupTx } from '../observation/observation-rollup.js';
import { type HostKeyTx, recordLearnedHostKeys } from '../known-hosts/known-host-record.js';
import { DEFAULT_OUTPUT_LIMIT_BYTES, limitOutput } from './run-output-limit.js';
import { isFinalEvent } from './run-output.service.js';

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
  finish(
    runId: string,
    outcome: { conclusion: RunConclusion; reason?: string },
    from: readonly RunStatus[],
  ): Promise<boolean>;
  /**
   * Queue mode's path (events read from the Redis stream, possibly by several API replicas): persists `events` now,
   * in order with everything else this ingester does, and answers those it could not take yet because their seq
   * leaves a gap after what their run has stored (an earlier part is still in another replica's hands); with
   * `acceptGaps` (the stream gave up waiting: the earlier part is lost) they are stored after the gap. Rejects
   * when the database stays unreachable, so the caller keeps them unacknowledged and offers them again.
   */
  ingestBatch(events: readonly RunEvent[], options?: { acceptGaps?: boolean }): Promise<{ deferred: RunEvent[] }>;
  /**
   * Moves a pipeline on (pipeline-advance.ts) in a transaction of its own, in order with everything else this ingester
   * does: after a submit, a retry or a cancel, and from the recovery sweep. Publishes and enqueues what it started.
   */
  advance(pipelineId: string): Promise<void>;
  /** Flushes and stops the timer; pushing afterwards throws. */
  close(): Promise<void>;
}

export type IngestTx = SplitTx &
  RollupTx &
  HostKeyTx & { runs: SplitTx['runs'] & Pick<RunRepo, 'findManyLocked' | 'insertTaskResults' | 'taskResultsOf'> };

export interface RunIngesterDeps {
  transaction: <T>(fn: (r: IngestTx) => Promise<T>) => Promise<T>;
  /** The EventBus, structurally. */
  publish: (event: RunEvent) => Promise<void>;
  /**
   * The RunQueue's enqueue, for pipeline steps an advance made pending (after commit). A failure is reported; the
   * recovery sweep enqueues the step later.
   */
  enqueue?: (job: { runId: string; labels?: string[] }) => Promise<void>;
  clock: Clock;
  /** Persist failures (flush rejects with them too) and publish failures (the events are stored; SSE clients catch up from the DB). */
  onError?: (err: unknown) => void;
  /** After commit: how many events this ingester newly stored (/metrics' ingest counter). */
  onStored?: (count: number) => void;
  /** After commit: the runs this ingester moved to finished (parents too), as stored (/metrics' run counters). */
  onFinished?: (runs: RunRow[]) => void;
  batchSize?: number;
  flushIntervalMs?: number;
  /** waits before the retries of a batch that failed for a reason that may pass (a lost connection, a busy database) */
  retryDelaysMs?: readonly number[];
  /** BATON_RUN_OUTPUT_LIMIT_MB in bytes (run-output-limit.ts): past it a run's log and event payloads are not stored */
  outputLimitBytes?: number | undefined;
}

/** A run as one batch sees it, read from its row in the batch's transaction and advanced event by event. */
interface RunState {
  lastSeq: number;
  logLines: number;
  logBytes: number;
  outputTruncated: boolean;
  parentId: string | null;
  /** its final status event is stored: nothing may follow it */
  finished: boolean;
}

export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [100, 500, 2_000];
const RUN_ID = /^run_[0-9A-HJKMNP-TV-Z]{26}$/;
/** run_events.seq is a 32-bit integer column. */
const MAX_SEQ = 2_147_483_647;
const MAX_REASON_CHARS = 500;

/**
 * A failure that will recur with the same events, so retrying is pointless and the bad event must be found:
 * PostgreSQL's data exceptions, constraint violations, statement errors and limits (SQLSTATE classes 22, 23, 42,
 * 54), SQLite's equivalents, and our own code choking on an event. Anything else (a lost connection, a busy or
 * locked database, a full disk) may pass and is retried.
 */
export function isDeterministicFailure(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    if (code.startsWith('SQLITE_')) return /^SQLITE_(CONSTRAINT|MISMATCH|TOOBIG|RANGE|ERROR)/.test(code);
    return /^(22|23|42|54)[0-9A-Z]{3}$/.test(code);
  }
  const name = (err as { name?: unknown } | null)?.name;
  return name === 'TypeError' || name === 'RangeError' || name === 'SyntaxError';
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const TASK_RESULT_STATUS: Record<string, string> = {
  runner_on_ok: 'ok',
  runner_on_failed: 'failed',
  runner_on_skipped: 'skipped',
  runner_on_unreachable: 'unreachable',
};
const CONCLUSIONS: readonly string[] = ['succeeded', 'failed', 'canceled', 'rejected', 'error'];

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function stateOf(row: RunRow): RunState {
  return {
    lastSeq: row.last_seq,
    logLines: row.log_lines,
    logBytes: row.log_bytes,
    outputTruncated: row.output_truncated === 1,
    parentId: row.parent_id,
    finished: row.status === 'finished',
  };
}

const isFinishedEvent = (e: RunEvent) => e.kind === 'status' && e.data.status === 'finished';

/** The rows of the runs whose final status event is among `events`, stored in this transaction: for onFinished. */
async function finishedRowsOf(r: IngestTx, events: RunEvent[]): Promise<RunRow[]> {
  const ids = [...new Set(events.filter(isFinishedEvent).map((e) => e.run_id))];
  if (ids.length === 0) return [];
  return (await r.runs.findManyLocked(ids)).filter((row) => row.status === 'finished');
}

/** What is stored in place of an event that cannot be: same run and seq, so the sequence stays gap-free. */
function invalidEvent(e: RunEvent, reason: string, ts: string): RunEvent {
  const kind = typeof e.kind === 'string' ? stripNul(e.kind).slice(0, 100) : undefined;
  return {
    run_id: e.run_id,
    seq: e.seq,
    ts,
    kind: 'invalid',
    data: { reason: stripNul(reason).slice(0, MAX_REASON_CHARS), ...(kind ? { kind } : {}) },
  };
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
  const worker = text(e.data.worker);
  await r.runs.transition(e.run_id, ['pending'], {
    status: 'running',
    started_at: e.ts,
    ...(worker ? { worker } : {}),
  });
  return parentId ? startParent(r, parentId, e.ts) : [];
}

/** `status: finished` from an executor; a run already finished (say worker_lost came first) is left as it is. */
async function applyFinished(r: IngestTx, e: RunEvent, parentId: string | null, sink: ReadySink): Promise<RunEvent[]> {
  const conclusion = text(e.data.conclusion);
  const stats = isRecord(e.data.stats) ? normalizeStats(e.data.stats) : null;
  const finish = async (): Promise<boolean> => {
    const moved = await r.runs.transition(e.run_id, ['running', 'pending'], {
      status: 'finished',
      conclusion: conclusion && CONCLUSIONS.includes(conclusion) ? conclusion : 'error',
      reason: text(e.data.reason) ?? null,
      exit_code: int(e.data.exit_code),
      stats,
      finished_at: e.ts,
    });
    if (moved) await recordLearnedHostKeys(r, e);
    if (moved && stats) {
      await r.runs.replaceHosts(e.run_id, toRunHostRows(e.run_id, stats));
      // The observation rollups, in this same transaction: they are never behind what a run shows.
      const run = await r.runs.findById(e.run_id);
      if (run) await recordRollups(r, [{ run, stats, results: await r.runs.taskResultsOf(e.run_id) }]);
    }
    return moved;
  };
  if (parentId) return finishUnderParent(r, parentId, finish, e.ts, sink);
  await finish();
  return [];
}

export function createRunIngester(deps: RunIngesterDeps): RunIngester {
  const batchSize = deps.batchSize ?? 500;
  const flushIntervalMs = deps.flushIntervalMs ?? 25;
  const onError = deps.onError ?? (() => {});
  const retryDelaysMs = deps.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  const outputLimitBytes = deps.outputLimitBytes ?? DEFAULT_OUTPUT_LIMIT_BYTES;
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

  /** Tells the onStored/onFinished observers what a committed transaction did; an observer that throws is reported. */
  function observe(stored: number, finished: RunRow[]): void {
    try {
      if (stored > 0) deps.onStored?.(stored);
      if (finished.length > 0) deps.onFinished?.(finished);
    } catch (err) {
      onError(err);
    }
  }

  /** Enqueues the steps an advance made pending; one that fails is left to the recovery sweep. */
  async function enqueueReady(sink: ReadySink): Promise<void> {
    for (const run of sink.ready) {
      await deps
        .enqueue?.({ runId: run.id, ...(run.labels.length > 0 ? { labels: run.labels } : {}) })
        .catch((err: unknown) =>
          onError(
            new Error(
              `run ${run.id} is pending but not enqueued (the recovery sweep will): ${(err as Error)?.message}`,
            ),
          ),
        );
    }
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
    const error = new Error(
      `persisting events of run ${runId} failed: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
    failures += 1;
    lastFailure = error;
    onError(error);
  }

  /**
   * Envelopes the database cannot take at all (a run id that is no run id, a seq outside the column) are dropped and
   * reported; an event whose kind or data has the wrong type becomes an `invalid` event with its seq; every other
   * event is stored with a NUL-free kind and an RFC 3339 UTC ts.
   */
  function screen(batch: RunEvent[]): RunEvent[] {
    const now = iso(deps.clock());
    const kept: RunEvent[] = [];
    const dropped: RunEvent[] = [];
    for (const e of batch) {
      if (
        typeof e.run_id !== 'string' ||
        !RUN_ID.test(e.run_id) ||
        !Number.isInteger(e.seq) ||
        e.seq < 1 ||
        e.seq > MAX_SEQ
      )
        dropped.push(e);
      else if (typeof e.kind !== 'string' || !isRecord(e.data))
        kept.push(invalidEvent(e, 'kind must be a string and data an object', now));
      else kept.push({ ...e, kind: stripNul(e.kind), ts: isoOrNull(e.ts) ?? now });
    }
    if (dropped.length) {
      const first = dropped[0]!;
      const what = `run_id ${JSON.stringify(first.run_id)?.slice(0, 60)}, seq ${String(first.seq).slice(0, 20)}`;
      recordFailure(
        new Error(`${dropped.length} event(s) with no valid run id or seq were dropped (first: ${what})`),
        String(first.run_id).slice(0, 60),
      );
    }
    return kept;
  }

  /** One transaction, retried after each of `retryDelaysMs` while it fails for a reason that may pass. Resolves with the last error, if any. */
  async function attempt(byRun: Map<string, RunEvent[]>, gaps?: RunEvent[]): Promise<unknown> {
    for (let i = 0; ; i++) {
      try {
        const deferred = await persistRuns(byRun, gaps !== undefined);
        gaps?.push(...deferred);
        return undefined;
      } catch (err) {
        if (isDeterministicFailure(err) || i >= retryDelaysMs.length) return err;
        await sleep(retryDelaysMs[i]!);
      }
    }
  }

  /**
   * One transaction per batch. A failure that outlives the retries loses nothing silently: when the database is
   * unreachable it is reported (flush rejects); when some event cannot be stored, each run's events are tried
   * alone and the culprits narrowed down, so the rest of the batch (the final status too) still lands.
   */
  /** `gaps`: where events after a seq gap go instead of being stored (none: stored). `rethrow`: the stream's caller keeps the events and offers them again. */
  async function persistBatch(batch: RunEvent[], gaps?: RunEvent[], rethrow = false): Promise<void> {
    const events = screen(batch);
    if (events.length === 0) return;
    const byRun = groupByRun(events);
    const err = await attempt(byRun, gaps);
    if (err === undefined) return;
    if (!isDeterministicFailure(err)) {
      // The in-process path can only report.
      if (rethrow) throw err;
      for (const runId of byRun.keys()) recordFailure(err, runId);
      return;
    }
    for (const [runId, runEvents] of byRun)
      await isolate(runId, runEvents, byRun.size === 1 ? err : undefined, gaps, rethrow);
  }

  /** Halves a run's failing events until the single events that fail are found; each is stored as an `invalid` event. */
  async function isolate(
    runId: string,
    events: RunEvent[],
    knownError?: unknown,
    gaps?: RunEvent[],
    rethrow = false,
  ): Promise<void> {
    const err = knownError ?? (await attempt(new Map([[runId, events]]), gaps));
    if (err === undefined) return;
    if (!isDeterministicFailure(err)) {
      if (rethrow) throw err;
      return recordFailure(err, runId);
    }
    if (events.length > 1) {
      const half = Math.ceil(events.length / 2);
      await isolate(runId, events.slice(0, half), undefined, gaps, rethrow);
      await isolate(runId, events.slice(half), undefined, gaps, rethrow);
      return;
    }
    const bad = events[0]!;
    const placeholderError = await attempt(
      new Map([[runId, [invalidEvent(bad, `not storable: ${(err as Error).message}`, bad.ts)]]]),
      gaps,
    );
    if (placeholderError !== undefined) return recordFailure(placeholderError, runId);
    onError(
      new Error(
        `event ${bad.seq} of run ${runId} (${bad.kind}) could not be stored and was replaced by an invalid event: ${(err as Error).message}`,
        { cause: err },
      ),
    );
    // The run's end was the event lost: it still ends, as an error.
    if (isFinishedEvent(bad)) {
      await finishNow(runId, { conclusion: 'error', reason: 'invalid_final_event' }, ['pending', 'running']).catch(
        (e: unknown) => recordFailure(e, runId),
      );
    }
  }

  /**
   * Stores what is new of each run's events in one transaction, then publishes it. Events of a run that does not exist
   * are reported, not stored. With `deferGaps`, an event whose seq leaves a gap after the run's stored events is not
   * stored but answered, with the rest of its run's events in this batch.
   */
  async function persistRuns(byRun: Map<string, RunEvent[]>, deferGaps = false): Promise<RunEvent[]> {
    const unknownRuns: string[] = [];
    const deferred: RunEvent[] = [];
    const finished: RunRow[] = [];
    const sink: ReadySink = { ready: [] };
    const toPublish = await deps.transaction(async (r) => {
      unknownRuns.length = 0;
      deferred.length = 0;
      finished.length = 0;
      sink.ready.length = 0;
      const rows = new Map((await r.runs.findManyLocked([...byRun.keys()])).map((row) => [row.id, row]));
      const drafts = new Map<string, RunState>();
      const eventRows: RunEventRow[] = [];
      const taskRows: RunTaskResultRow[] = [];
      const fresh: RunEvent[] = [];
      for (const [runId, events] of byRun) {
        const row = rows.get(runId);
        if (!row) {
          unknownRuns.push(runId);
          continue;
        }
        const draft = stateOf(row);
        drafts.set(runId, draft);
        for (const given of events) {
          // Already stored (a replayed delivery): not stored or published again. After the final status: never stored.
          if (given.seq <= draft.lastSeq || draft.finished) continue;
          if (deferGaps && given.seq > draft.lastSeq + 1) {
            deferred.push(given);
            continue;
          }
          // As stored and published: within the output limit, the log's byte and line counts advanced.
          const { event: e, logByte } = limitOutput(given, draft, outputLimitBytes);
          eventRows.push(toEventRow(e, logByte));
          const taskStatus = TASK_RESULT_STATUS[e.kind];
          if (taskStatus) taskRows.push(toTaskResultRow(e, taskStatus));
          draft.lastSeq = e.seq;
          if (isFinishedEvent(e)) draft.finished = true;
          fresh.push(e);
        }
      }
      await r.runEvents.insertBatch(eventRows);
      await r.runs.insertTaskResults(taskRows);
      for (const [runId, d] of drafts)
        await r.runs.advanceProgress(runId, {
          lastSeq: d.lastSeq,
          logLines: d.logLines,
          logBytes: d.logBytes,
          outputTruncated: d.outputTruncated,
        });
      const parentEvents: RunEvent[] = [];
      for (const e of fresh) {
        if (e.kind !== 'status') continue;
        const parentId = drafts.get(e.run_id)!.parentId;
        if (e.data.status === 'running') parentEvents.push(...(await applyRunning(r, e, parentId)));
        if (e.data.status === 'finished') parentEvents.push(...(await applyFinished(r, e, parentId, sink)));
      }
      finished.push(...(await finishedRowsOf(r, [...fresh, ...parentEvents])));
      return [...fresh, ...parentEvents];
    });
    for (const runId of unknownRuns) recordFailure(new Error(`run ${runId} does not exist`), runId);
    observe(toPublish.length, finished);
    await publishAll(toPublish);
    await enqueueReady(sink);
    return deferred;
  }

  async function finishNow(
    runId: string,
    outcome: { conclusion: RunConclusion; reason?: string },
    from: readonly RunStatus[],
  ): Promise<boolean> {
    const at = iso(deps.clock());
    const data = {
      status: 'finished',
      conclusion: outcome.conclusion,
      ...(outcome.reason ? { reason: outcome.reason } : {}),
    };
    const sink: ReadySink = { ready: [] };
    const finished: RunRow[] = [];
    const events = await deps.transaction(async (r) => {
      sink.ready.length = 0;
      finished.length = 0;
      const run = await r.runs.findById(runId);
      if (!run) return undefined;
      const own: RunEvent[] = [];
      const finishRun = async (): Promise<boolean> => {
        const moved = await r.runs.transition(runId, from, {
          status: 'finished',
          conclusion: outcome.conclusion,
          reason: outcome.reason ?? null,
          finished_at: at,
        });
        if (moved) own.push(await appendStatusEvent(r, runId, at, data));
        return moved;
      };
      const parentEvents = run.parent_id
        ? await finishUnderParent(r, run.parent_id, finishRun, at, sink)
        : await finishRun().then(() => []);
      if (own.length > 0) finished.push(...(await finishedRowsOf(r, [...own, ...parentEvents])));
      return own.length > 0 ? [...own, ...parentEvents] : undefined;
    });
    if (!events) return false;
    observe(events.length, finished);
    await publishAll(events);
    await enqueueReady(sink);
    return true;
  }

  async function advanceNow(pipelineId: string): Promise<void> {
    const sink: ReadySink = { ready: [] };
    const finished: RunRow[] = [];
    const events = await deps.transaction(async (r) => {
      sink.ready.length = 0;
      const advanced = await advancePipeline(r, pipelineId, iso(deps.clock()), sink);
      finished.splice(0, finished.length, ...(await finishedRowsOf(r, advanced)));
      return advanced;
    });
    observe(events.length, finished);
    await publishAll(events);
    await enqueueReady(sink);
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
      // A run's last event drains at once: nothing follows it to share the batch, and its run's end (and the
      // followers' `end`) would otherwise wait out the flush interval (bench/overhead).
      if (buffer.length >= batchSize || isFinalEvent(event)) scheduleDrain();
      else if (timer === undefined && !drainQueued) {
        timer = setTimeout(scheduleDrain, flushIntervalMs);
        // A pending flush must not keep the process alive; close() flushes what is left.
        timer.unref();
      }
    },

    flush,

    ingestBatch(events, options = {}) {
      if (closed) return Promise.reject(new Error('the run ingester is closed'));
      const gaps = options.acceptGaps ? undefined : ([] as RunEvent[]);
      // Per run in seq order, so a batch holding a run's next events and later ones stores them all at once.
      const sorted = [...events].sort((a, b) => (a.run_id < b.run_id ? -1 : a.run_id > b.run_id ? 1 : a.seq - b.seq));
      return enqueue(async () => {
        for (let i = 0; i < sorted.length; i += batchSize)
          await persistBatch(sorted.slice(i, i + batchSize), gaps, true);
        return { deferred: gaps ?? [] };
      });
    },

    async claim(runId, worker) {
      const at = iso(deps.clock());
      const result = await deps.transaction(async (r) => {
        const run = await r.runs.findById(runId);
        if (!run || !(await r.runs.transition(runId, ['pending'], { status: 'running', worker, started_at: at })))
          return undefined;
        return run.parent_id ? startParent(r, run.parent_id, at) : [];
      });
      if (!result) return false;
      observe(result.length, []);
      await publishAll(result);
      return true;
    },

    finish(runId, outcome, from) {
      if (buffer.some((e) => e.run_id === runId)) scheduleDrain();
      return enqueue(() => finishNow(runId, outcome, from));
    },

    advance(pipelineId) {
      return enqueue(() => advanceNow(pipelineId));
    },

    async close() {
      closed = true;
      await flush();
    },
  };
}
