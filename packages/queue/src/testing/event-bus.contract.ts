import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { RunEvent } from '@baton/contracts';
import type { EventBus, RunEventListener } from '../event-bus.js';
import { Counter } from './async.js';

/**
 * What one implementation hands the contract. `publisher` and `subscriber` are two buses as two processes
 * would hold them (an API replica ingesting, another serving SSE); an in-process bus passes itself twice.
 */
export interface EventBusHarness {
  publisher: EventBus;
  subscriber: EventBus;
}

export type MakeEventBus = () => Promise<EventBusHarness>;

const event = (runId: string, seq: number): RunEvent => ({
  run_id: runId,
  seq,
  ts: '2024-01-01T00:00:00.000Z',
  kind: 'log',
  data: { text: `line ${seq}\n`, start_line: seq, end_line: seq + 1 },
});

/** A listener that keeps what it got and lets a test wait for a number of events. */
class Received {
  readonly events: RunEvent[] = [];
  readonly count = new Counter();
  readonly listener: RunEventListener = (e) => {
    this.events.push(e);
    this.count.increment();
  };

  seqs(): number[] {
    return this.events.map((e) => e.seq);
  }
}

/** The behaviour every EventBus must show (ARCHITECTURE.md, "Events"), run against each implementation. */
export function eventBusContract(name: string, make: MakeEventBus): void {
  describe(`EventBus contract: ${name}`, () => {
    let publisher: EventBus;
    let subscriber: EventBus;

    beforeEach(async () => {
      ({ publisher, subscriber } = await make());
    });

    afterEach(async () => {
      await subscriber.close();
      await publisher.close();
    });

    async function publishAll(runId: string, seqs: number[]): Promise<void> {
      for (const seq of seqs) await publisher.publish(event(runId, seq));
    }

    it("delivers a run's events in the order they were published", async () => {
      const received = new Received();
      await subscriber.subscribe('run-a', received.listener);
      const seqs = Array.from({ length: 50 }, (_, i) => i + 1);
      await publishAll('run-a', seqs);
      await received.count.reach(50, 'all 50 events');

      expect(received.seqs()).toEqual(seqs);
      expect(received.events[0]).toEqual(event('run-a', 1));
    });

    it("gives each subscriber only its own run's events", async () => {
      const a = new Received();
      const b = new Received();
      await subscriber.subscribe('run-a', a.listener);
      await subscriber.subscribe('run-b', b.listener);
      for (const seq of [1, 2, 3]) {
        await publisher.publish(event('run-a', seq));
        await publisher.publish(event('run-b', seq));
      }
      await a.count.reach(3, 'run-a events');
      await b.count.reach(3, 'run-b events');

      expect(a.events.map((e) => [e.run_id, e.seq])).toEqual([
        ['run-a', 1],
        ['run-a', 2],
        ['run-a', 3],
      ]);
      expect(b.events.map((e) => [e.run_id, e.seq])).toEqual([
        ['run-b', 1],
        ['run-b', 2],
        ['run-b', 3],
      ]);
    });

    it('stops delivering to a listener once it unsubscribes, and only to that one', async () => {
      const leaving = new Received();
      const staying = new Received();
      const unsubscribe = await subscriber.subscribe('run-a', leaving.listener);
      await subscriber.subscribe('run-a', staying.listener);
      await publishAll('run-a', [1]);
      await leaving.count.reach(1, 'the first event');

      unsubscribe();
      // A second call must not remove anyone else.
      unsubscribe();
      await publishAll('run-a', [2]);
      await staying.count.reach(2, 'the second event to the remaining listener');

      expect(leaving.seqs()).toEqual([1]);
      expect(staying.seqs()).toEqual([1, 2]);
    });

    it('holds one underlying subscription per run however many listeners it has', async () => {
      expect(subscriber.subscriptionCount()).toBe(0);
      const watchers = Array.from({ length: 5 }, () => new Received());
      const unsubscribes = [];
      for (const watcher of watchers) unsubscribes.push(await subscriber.subscribe('run-a', watcher.listener));
      expect(subscriber.subscriptionCount()).toBe(1);
      const other = new Received();
      const unsubscribeOther = await subscriber.subscribe('run-b', other.listener);
      expect(subscriber.subscriptionCount()).toBe(2);

      await publishAll('run-a', [1]);
      for (const watcher of watchers) await watcher.count.reach(1, 'the event on every listener');

      for (const unsubscribe of unsubscribes.slice(1)) unsubscribe();
      expect(subscriber.subscriptionCount()).toBe(2);
      unsubscribes[0]!();
      expect(subscriber.subscriptionCount()).toBe(1);
      unsubscribeOther();
      expect(subscriber.subscriptionCount()).toBe(0);
    });

    it('accepts a publish nobody listens to, and does not replay it to a later subscriber', async () => {
      await expect(publisher.publish(event('run-a', 1))).resolves.toBeUndefined();
      const late = new Received();
      await subscriber.subscribe('run-a', late.listener);
      await publishAll('run-a', [2]);
      await late.count.reach(1, 'the event published after subscribing');

      expect(late.seqs()).toEqual([2]);
    });

    it('keeps delivering to other listeners when one throws', async () => {
      await subscriber.subscribe('run-a', () => {
        throw new Error('a broken SSE client');
      });
      const healthy = new Received();
      await subscriber.subscribe('run-a', healthy.listener);
      await publishAll('run-a', [1, 2]);
      await healthy.count.reach(2, 'both events to the healthy listener');

      expect(healthy.seqs()).toEqual([1, 2]);
    });

    it('refuses to publish or subscribe once closed, holding no subscription', async () => {
      await subscriber.subscribe('run-a', new Received().listener);
      await subscriber.close();
      await publisher.close();

      expect(subscriber.subscriptionCount()).toBe(0);
      await expect(publisher.publish(event('run-a', 1))).rejects.toThrow(/closed/);
      await expect(subscriber.subscribe('run-a', () => {})).rejects.toThrow(/closed/);
    });
  });
}
