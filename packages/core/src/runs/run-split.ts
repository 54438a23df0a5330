// A split run aggregates its shards (ARCHITECTURE.md, "Run states"): running once a shard starts, finished
// once every shard is, with a conclusion, per-host stats and run_hosts made from the shards'.
import type { HostCounts, RunConclusion, RunEvent } from '@baton/contracts';
import type { RunRepo, RunRow } from '@baton/db';
import { appendStatusEvent, type EventTx, stripNul } from './run-ingest.rows.js';
import { toRunHostRows } from './run.view.js';

export type SplitRunRepo = Pick<RunRepo, 'findById' | 'children' | 'transition' | 'advanceProgress' | 'replaceHosts'>;
export type SplitTx = EventTx & { runs: SplitRunRepo };

const MAX_HOST_REASON_CHARS = 200;
const COUNTERS = ['ok', 'changed', 'failed', 'unreachable', 'skipped', 'rescued', 'ignored'] as const;

/** A counter as stored: a whole number that fits the 32-bit columns, else 0. */
const counter = (v: unknown): number =>
  typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 2_147_483_647 ? v : 0;

/**
 * Per-host counts as stored; a missing or odd counter reads as 0, a host entry that is not an object is dropped,
 * and host names lose any NUL (they become run_hosts rows).
 */
export function normalizeStats(stats: Record<string, unknown>): Record<string, HostCounts> {
  const out: Record<string, HostCounts> = {};
  for (const [host, raw] of Object.entries(stats)) {
    if (typeof raw !== 'object' || raw === null) continue;
    const counts = raw as Record<string, unknown>;
    const normalized = Object.fromEntries(COUNTERS.map((k) => [k, counter(counts[k])])) as unknown as HostCounts;
    // Baton's own word on an unreachable host (`host key changed`): short text, kept only beside a failure to reach it.
    if (typeof counts.reason === 'string' && normalized.unreachable > 0)
      normalized.reason = stripNul(counts.reason).slice(0, MAX_HOST_REASON_CHARS);
    out[stripNul(host)] = normalized;
  }
  return out;
}

/** The shards' per-host counts, summed (shards have disjoint hosts, so this is mostly a union). */
export function mergeShardStats(shards: RunRow[]): Record<string, HostCounts> {
  const merged: Record<string, HostCounts> = {};
  for (const shard of shards) {
    if (!shard.stats) continue;
    for (const [host, counts] of Object.entries(normalizeStats(shard.stats))) {
      const into = (merged[host] ??= {
        ok: 0,
        changed: 0,
        failed: 0,
        unreachable: 0,
        skipped: 0,
        rescued: 0,
        ignored: 0,
      });
      for (const k of COUNTERS) into[k] += counts[k];
      if (counts.reason !== undefined) into.reason = counts.reason;
    }
  }
  return merged;
}

/** Cancel asked for wins, then any failure, then any cancel, then any rejection; otherwise succeeded. */
export function splitConclusion(
  parent: Pick<RunRow, 'cancel_requested_at'>,
  shards: Array<Pick<RunRow, 'conclusion'>>,
): RunConclusion {
  const any = (...cs: string[]) => shards.some((s) => s.conclusion !== null && cs.includes(s.conclusion));
  if (parent.cancel_requested_at) return 'canceled';
  if (any('failed', 'error')) return 'failed';
  if (any('canceled')) return 'canceled';
  if (any('rejected')) return 'rejected';
  return 'succeeded';
}

/**
 * A child started: a pending parent becomes running, with its own status event, and so on up (a shard of a split
 * pipeline step starts the step and the pipeline).
 */
export async function startParent(r: SplitTx, parentId: string, at: string): Promise<RunEvent[]> {
  const moved = await r.runs.transition(parentId, ['pending'], { status: 'running', started_at: at });
  if (!moved) return [];
  const events = [await appendStatusEvent(r, parentId, at, { status: 'running' })];
  const grandparent = (await r.runs.findById(parentId))?.parent_id;
  return grandparent ? [...events, ...(await startParent(r, grandparent, at))] : events;
}

/**
 * Takes the parent's row lock with a same-value write, so shard finishes of one split queue up here: the
 * later one then sees the earlier one's shard as finished (PostgreSQL's READ COMMITTED would otherwise let
 * each miss the other, and neither finish the parent). Undefined when the parent is gone or finished.
 */
export async function lockParent(r: SplitTx, parentId: string): Promise<RunRow | undefined> {
  for (;;) {
    const parent = await r.runs.findById(parentId);
    if (!parent || parent.status === 'finished') return undefined;
    // Statuses only move forward, so a lost race here retries a few times at most.
    if (await r.runs.transition(parentId, [parent.status], { status: parent.status })) return r.runs.findById(parentId);
  }
}

/**
 * Finishes a shard through `finishShard` (false: it was not finishable, nothing else happens) and, when that
 * was the last unfinished shard, finishes the parent, all in the caller's transaction. Locks go shard then
 * parent, the order every ingest transaction uses. Returns the parent's events to publish.
 */
export async function aggregateParentFinish(
  r: SplitTx,
  parentId: string,
  finishShard: () => Promise<boolean>,
  at: string,
): Promise<RunEvent[]> {
  if (!(await finishShard())) return [];
  const parent = await lockParent(r, parentId);
  if (!parent) return [];
  const shards = await r.runs.children(parentId);
  if (shards.some((s) => s.status !== 'finished')) return [];
  const conclusion = splitConclusion(parent, shards);
  const stats = mergeShardStats(shards);
  const moved = await r.runs.transition(parentId, ['pending', 'held', 'waiting', 'running'], {
    status: 'finished',
    conclusion,
    reason: null,
    exit_code: null,
    stats,
    finished_at: at,
  });
  if (!moved) return [];
  await r.runs.replaceHosts(parentId, toRunHostRows(parentId, stats));
  return [await appendStatusEvent(r, parentId, at, { status: 'finished', conclusion })];
}
