import type { Logger } from 'winston';
import type { Services } from '../wiring.js';

// The scheduler loop every API replica runs: filled in by the schedules domain (issue 11).
export function startScheduler(services: Services, opts: { logger: Logger }): { stop(): Promise<void> } {
  void services;
  void opts;
  return { stop: async () => {} };
}
