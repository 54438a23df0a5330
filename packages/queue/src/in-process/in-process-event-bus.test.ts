import { describe, expect, it } from '@jest/globals';
import { eventBusContract } from '../testing/index.js';
import { createInProcessEventBus } from './in-process-event-bus.js';

eventBusContract('in-process', async () => {
  const bus = createInProcessEventBus();
  return { publisher: bus, subscriber: bus };
});

describe('in-process EventBus', () => {
  it('hands an error thrown by a listener to onListenerError', async () => {
    const errors: unknown[] = [];
    const bus = createInProcessEventBus({ onListenerError: (error) => errors.push(error) });
    const broken = new Error('a broken SSE client');
    await bus.subscribe('run-a', () => {
      throw broken;
    });
    await bus.publish({ run_id: 'run-a', seq: 1, ts: '2024-01-01T00:00:00.000Z', kind: 'log', data: {} });

    expect(errors).toEqual([broken]);
    await bus.close();
  });
});
