import type { RunEvent } from '@baton/contracts';
import type { RunEventListener, Unsubscribe } from './event-bus.js';

/** Ends one underlying subscription. */
export type EndChannel = () => Promise<void>;

/**
 * Where a bus's events really come from: an in-memory channel or a Redis pub/sub channel per run.
 * `open` resolves once events published from then on reach `deliver`.
 */
export interface RunChannelTransport {
  open(runId: string, deliver: (event: RunEvent) => void): Promise<EndChannel>;
}

export interface RunFanOutDeps {
  transport: RunChannelTransport;
  /** A listener that throws must not starve the others, and a failed channel end must not go unseen. */
  onError?: (error: unknown) => void;
}

export interface RunFanOut {
  subscribe(runId: string, listener: RunEventListener): Promise<Unsubscribe>;
  channelCount(): number;
  close(): Promise<void>;
}

interface Channel {
  listeners: Set<RunEventListener>;
  opened: Promise<EndChannel>;
}

/**
 * Per-run fan-out shared by both EventBus implementations: any number of listeners on one run cost one
 * underlying channel, opened with the first listener and ended with the last, so a thousand SSE clients
 * watching one run hold one Redis subscription.
 */
export function createRunFanOut({ transport, onError = () => {} }: RunFanOutDeps): RunFanOut {
  const channels = new Map<string, Channel>();
  let closed = false;

  const endChannel = (channel: Channel): void => {
    channel.opened.then((end) => end()).catch(onError);
  };

  const openChannel = (runId: string): Channel => {
    const channel: Channel = { listeners: new Set(), opened: Promise.resolve(async () => {}) };
    channel.opened = transport.open(runId, (event) => {
      // A copy: a listener may unsubscribe (itself or another) while we iterate.
      for (const listener of [...channel.listeners]) {
        try {
          listener(event);
        } catch (error) {
          onError(error);
        }
      }
    });
    // A channel that failed to open is dropped, so the next subscriber tries afresh.
    channel.opened.catch(() => {
      if (channels.get(runId) === channel) channels.delete(runId);
    });
    channels.set(runId, channel);
    return channel;
  };

  return {
    async subscribe(runId, listener) {
      if (closed) throw new Error('event bus is closed');
      const channel = channels.get(runId) ?? openChannel(runId);
      // A wrapper, so subscribing the same function twice gives two independent subscriptions.
      const entry: RunEventListener = (event) => listener(event);
      channel.listeners.add(entry);
      try {
        await channel.opened;
      } catch (error) {
        channel.listeners.delete(entry);
        throw error;
      }
      let active = true;
      return () => {
        if (!active) return;
        active = false;
        channel.listeners.delete(entry);
        if (channel.listeners.size === 0 && channels.get(runId) === channel) {
          channels.delete(runId);
          endChannel(channel);
        }
      };
    },
    channelCount: () => channels.size,
    async close() {
      closed = true;
      const open = [...channels.values()];
      channels.clear();
      for (const channel of open) channel.listeners.clear();
      await Promise.allSettled(open.map((channel) => channel.opened.then((end) => end())));
    },
  };
}
