import type { RunEvent } from '@baton/contracts';
import type { EventBus } from '../event-bus.js';
import { createRunFanOut, type RunChannelTransport } from '../run-fan-out.js';

export interface InProcessEventBusDeps {
  onListenerError?: (error: unknown) => void;
}

/**
 * Embedded mode's EventBus: publish hands the event to the run's channel synchronously, so order per run is
 * the publish order and nothing is buffered. The channel map stands where Redis channels stand in queue mode,
 * behind the same fan-out.
 */
export function createInProcessEventBus({ onListenerError }: InProcessEventBusDeps = {}): EventBus {
  const deliverers = new Map<string, (event: RunEvent) => void>();
  const transport: RunChannelTransport = {
    async open(runId, deliver) {
      deliverers.set(runId, deliver);
      return async () => {
        if (deliverers.get(runId) === deliver) deliverers.delete(runId);
      };
    },
  };
  const fanOut = createRunFanOut({ transport, onError: onListenerError });
  let closed = false;

  return {
    async publish(event) {
      if (closed) throw new Error('event bus is closed');
      deliverers.get(event.run_id)?.(event);
    },
    subscribe: (runId, listener) => fanOut.subscribe(runId, listener),
    subscriptionCount: () => fanOut.channelCount(),
    async close() {
      closed = true;
      await fanOut.close();
    },
  };
}
