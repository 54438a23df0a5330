import type { Timers } from '../timers.js';

interface Scheduled {
  id: number;
  at: number;
  callback: () => void;
}

/** Timers that move only when a test calls `advance`, so lease expiry is tested without waiting. */
export class ManualTimers implements Timers {
  private current = 0;
  private nextId = 1;
  private readonly scheduled = new Map<number, Scheduled>();

  now(): number {
    return this.current;
  }

  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.scheduled.set(id, { id, at: this.current + Math.max(0, ms), callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    if (typeof handle === 'number') this.scheduled.delete(handle);
  }

  /** Moves the clock forward, firing every timer due on the way in time order (and at equal times, in creation order). */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      const due = [...this.scheduled.values()]
        .filter((t) => t.at <= target)
        .sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.scheduled.delete(due.id);
      this.current = due.at;
      due.callback();
    }
    this.current = target;
  }

  /** Timers still scheduled: a closed component must leave none behind. */
  pendingCount(): number {
    return this.scheduled.size;
  }
}
