import type { Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';

// Filled in by the templates domain (issue 11).
export function templateRoutes(s: Services): Operation[] {
  void s;
  return [];
}
