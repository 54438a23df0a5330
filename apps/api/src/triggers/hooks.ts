import type { Express } from 'express';
import type { Logger } from 'winston';
import type { Services } from '../wiring.js';

// POST /hooks/{token}: filled in by the triggers domain (issue 11). Mounted before the JSON body parser: the
// signature is checked over the raw body.
export function mountHooks(app: Express, s: Services, logger: Logger): void {
  void app;
  void s;
  void logger;
}
