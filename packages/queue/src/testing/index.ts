export * from './async.js';
export * from './event-bus.contract.js';
export * from './manual-timers.js';
export * from './run-queue.contract.js';
export * from './login-throttle.contract.js';
export { type RedisOutage, startRedisProxy } from './redis-test-support.js';
