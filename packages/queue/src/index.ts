export * from './event-bus.js';
export * from './in-process/in-process-event-bus.js';
export * from './in-process/in-process-run-queue.js';
export * from './run-fan-out.js';
export * from './run-queue.js';
export * from './timers.js';
