// POST /hooks/{token}: a forge's push delivery (issue 11, "Webhook triggers"). Its operation (fireHook, in
// trigger.routes.ts) is mounted with all the others; this puts the raw-body reader in front of it, before the JSON
// body parser, because the signature covers the bytes exactly as they came.
import express, { type Express } from 'express';
import type { Logger } from 'winston';
import type { Services } from '../wiring.js';

/** The largest delivery accepted (413 above it): GitHub caps its payloads at 25 MB, pushes are far smaller. */
export const HOOK_BODY_LIMIT = 5 * 1024 * 1024;

export function mountHooks(app: Express, s: Pick<Services, 'triggers'>, logger: Logger): void {
  void s;
  void logger;
  // Any content type: forges send application/json, or a form with a `payload` field; the service reads both.
  // Once read, the request is finished and the JSON parser leaves req.body (a Buffer) alone.
  app.post('/hooks/:token', express.raw({ type: () => true, limit: HOOK_BODY_LIMIT }));
}
