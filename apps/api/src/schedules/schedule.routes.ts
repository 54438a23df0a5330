import type { Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';

// Filled in by the schedules domain (issue 11).
export function scheduleRoutes(s: Services): Operation[] {
  void s;
  return [];
}
