/**
 * Names shared by the worker-side producer and the API-side consumer of the run event stream
 * (ARCHITECTURE.md, "A run's path" step 4).
 */

/** The Redis Stream every worker appends run events to. */
export const runEventStreamKey = (prefix: string): string => `${prefix}:events`;

/** The one consumer group all API replicas read the stream as. */
export const INGEST_GROUP = 'ingest';

/** The entry field that holds the JSON of one RunEvent. */
export const EVENT_FIELD = 'e';

/** Pause before retrying after a failure: 100 ms, 500 ms, 2 s, then every 2 s. */
export const retryDelay = (failures: number): number => [100, 500, 2_000][failures - 1] ?? 2_000;
