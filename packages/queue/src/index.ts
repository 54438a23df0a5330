// What embedded mode needs: the seams, their in-process implementations and errors, and the Redis settings parsing
// (config). The Redis implementations (BullMQ, ioredis: some 300 modules) are `@baton/queue/redis`, loaded only by
// what runs in queue mode.
export * from './event-bus.js';
export * from './in-process/in-process-event-bus.js';
export * from './in-process/in-process-run-queue.js';
export * from './in-process/in-process-login-throttle.js';
export * from './login-throttle.js';
export * from './run-fan-out.js';
export * from './run-queue.js';
export * from './run-queue-errors.js';
export * from './redis/redis-run-queue-errors.js';
export * from './timers.js';
export * from './redis/redis-endpoint.js';
export * from './rate-limit.js';
export * from './in-process/in-process-rate-limiter.js';
