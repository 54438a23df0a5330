import type { Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';

// Filled in by the triggers domain (issue 11).
export function triggerRoutes(s: Services): Operation[] {
  void s;
  return [];
}
