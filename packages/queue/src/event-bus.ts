import type { RunEvent } from '@baton/contracts';

/**
 * The EventBus seam (ARCHITECTURE.md, "A run's path" step 4): events already persisted are published live to
 * the SSE clients of their run. It is live only: a subscriber gets events published after it subscribed;
 * anything earlier is read from the database (`Last-Event-ID`). Two implementations share one contract suite
 * (src/testing/event-bus.contract.ts): in-process for embedded mode, Redis pub/sub for queue mode.
 */

export type RunEventListener = (event: RunEvent) => void;

/** Removes one listener; the run's underlying subscription ends with its last listener. */
export type Unsubscribe = () => void;

export interface EventBus {
  publish(event: RunEvent): Promise<void>;
  /**
   * Resolves once events published from now on reach `listener`, in publish order for the run.
   * Asynchronous because a Redis SUBSCRIBE takes a round trip before it is live.
   */
  subscribe(runId: string, listener: RunEventListener): Promise<Unsubscribe>;
  /** Underlying subscriptions held: one per run with listeners, however many listeners it has. */
  subscriptionCount(): number;
  /** Ends every subscription; idempotent. Publishing or subscribing afterwards rejects. */
  close(): Promise<void>;
}
