import type { Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';

// Filled in by the pipelines domain (issue 11).
export function pipelineRoutes(s: Services): Operation[] {
  void s;
  return [];
}
