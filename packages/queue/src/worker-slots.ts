import type { JobHandler, WorkerSpec } from './run-queue.js';

/** A worker registered with a RunQueue, as both implementations keep it: what it may take and what it holds. */
export interface WorkerSlot {
  spec: WorkerSpec;
  labels: Set<string>;
  handler: JobHandler;
  active: number;
  /** Breaks ties between equally loaded workers, so jobs spread instead of piling on the first one. */
  lastAssigned: number;
  closed: boolean;
  /** Paused by its owner (WorkerSubscription.pause): takes no new job, keeps the ones it holds. */
  paused: boolean;
  /** Resolved when `active` drops to 0 (a closing worker waits for its handlers). */
  onIdle: Array<() => void>;
}

export function newWorkerSlot(spec: WorkerSpec, handler: JobHandler): WorkerSlot {
  return {
    spec: { ...spec, labels: [...spec.labels] },
    labels: new Set(spec.labels),
    handler,
    active: 0,
    lastAssigned: 0,
    closed: false,
    paused: false,
    onIdle: [],
  };
}

/** Open, not paused and below its capacity. */
export const hasRoom = (slot: WorkerSlot): boolean => !slot.closed && !slot.paused && slot.active < slot.spec.capacity;
export const mayServe = (slot: WorkerSlot, labels: readonly string[]): boolean =>
  labels.every((label) => slot.labels.has(label));

/** The least loaded slot that may take a job with `labels` now (the longest unassigned among equals), if any. */
export function leastLoaded<S extends WorkerSlot>(slots: readonly S[], labels: readonly string[]): S | undefined {
  let best: S | undefined;
  for (const slot of slots) {
    if (!hasRoom(slot) || !mayServe(slot, labels)) continue;
    if (!best || slot.active < best.active || (slot.active === best.active && slot.lastAssigned < best.lastAssigned))
      best = slot;
  }
  return best;
}

/** One handler settled: frees its place and wakes a close waiting for the worker to be idle. */
export function release(slot: WorkerSlot): void {
  slot.active -= 1;
  if (slot.active === 0) for (const resolve of slot.onIdle.splice(0)) resolve();
}

/** Resolves once the slot holds nothing. */
export function whenIdle(slot: WorkerSlot): Promise<void> {
  if (slot.active === 0) return Promise.resolve();
  return new Promise<void>((resolve) => slot.onIdle.push(resolve));
}
