// `@baton/queue/redis`: the Redis implementations of the seams (BullMQ, ioredis), for queue mode only.
export * from './redis-run-queue.js';
export * from './worker-registry.js';
export * from './redis-leader.js';
export * from './replica-registry.js';
export * from './redis-connection.js';
export * from './redis-event-bus.js';
export * from './redis-login-throttle.js';
export * from './run-event-producer.js';
export * from './run-event-consumer.js';
export * from './run-event-stream-keys.js';
export * from './redis-rate-limiter.js';
export * from './run-claims.js';
export * from './ingest-consumers.js';
