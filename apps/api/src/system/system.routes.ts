import crypto from 'node:crypto';
import { UnauthenticatedError, UnavailableError } from '@baton/core';
import type { Request } from 'express';
import { z } from 'zod';
import { defineOperation, type Operation } from '../http/registry.js';
import type { Metrics } from './metrics.js';

/** What /readyz may say is not ready (thrown by the server's ping). */
export const READINESS_REASONS: ReadonlySet<string> = new Set([
  'starting',
  'database unreachable',
  'Redis unreachable',
]);

const digest = (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest();

/**
 * Whether the request carries `Authorization: Bearer <token>`. The two are compared as SHA-256 digests in constant
 * time, so neither the token's length nor how much of it matched shows in the answer's timing.
 */
function carriesBearer(req: Request, token: string): boolean {
  const m = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '');
  return crypto.timingSafeEqual(digest(m?.[1] ?? ''), digest(token)) && m !== null;
}

export function systemRoutes(deps: {
  ping(): Promise<void>;
  metrics: Metrics;
  /** BATON_METRICS_TOKEN; unset: /metrics is open */
  metricsToken?: string | undefined;
  openapi: () => Record<string, unknown>;
}): Operation[] {
  return [
    defineOperation({
      operationId: 'healthz',
      method: 'get',
      path: '/healthz',
      unversioned: true,
      tag: 'operations',
      auth: 'public',
      summary: 'Liveness: the process is up and serving.',
      responses: { 200: { description: 'Alive', schema: z.object({ status: z.literal('ok') }) } },
      handle: () => ({ status: 200, body: { status: 'ok' } }),
    }),
    defineOperation({
      operationId: 'readyz',
      method: 'get',
      path: '/readyz',
      unversioned: true,
      tag: 'operations',
      auth: 'public',
      summary:
        'Readiness: start-up recovery is done and the database (in queue mode Redis too) answers; 503 naming what is not ready.',
      responses: { 200: { description: 'Ready', schema: z.object({ status: z.literal('ready') }) } },
      async handle() {
        try {
          await deps.ping();
        } catch (err) {
          // Only the reasons the server names itself: a driver's message could show internal addresses.
          const reason = (err as Error)?.message;
          throw new UnavailableError(READINESS_REASONS.has(reason) ? reason : 'database unreachable');
        }
        return { status: 200, body: { status: 'ready' } };
      },
    }),
    defineOperation({
      operationId: 'metrics',
      method: 'get',
      path: '/metrics',
      unversioned: true,
      tag: 'operations',
      auth: 'public',
      summary: 'Prometheus metrics (text exposition format).',
      description:
        'Open to anyone unless BATON_METRICS_TOKEN (or BATON_METRICS_TOKEN_FILE) is set; then the request must carry ' +
        '`Authorization: Bearer <that token>` (Prometheus: `authorization: {credentials: …}` in the scrape config), ' +
        'else 401 problem with `WWW-Authenticate: Bearer`. Sign-in tokens are not accepted here. Label values come ' +
        'from fixed sets: no run ids, host names or user names, and no counts of users.',
      responses: {
        200: { description: 'Metrics', contentType: 'text/plain', schema: z.string() },
        401: { description: 'BATON_METRICS_TOKEN is set and the request does not carry it' },
      },
      async handle({ req, res }) {
        if (deps.metricsToken !== undefined && !carriesBearer(req, deps.metricsToken))
          throw new UnauthenticatedError('GET /metrics needs the metrics bearer token (BATON_METRICS_TOKEN)');
        res.setHeader('Content-Type', deps.metrics.registry.contentType);
        res.status(200).send(await deps.metrics.registry.metrics());
        return undefined;
      },
    }),
    defineOperation({
      operationId: 'openapi',
      method: 'get',
      path: '/openapi.json',
      tag: 'operations',
      auth: 'public',
      summary: 'This OpenAPI 3.1 document.',
      responses: { 200: { description: 'The document', schema: z.record(z.string(), z.unknown()) } },
      handle: () => ({ status: 200, body: deps.openapi() }),
    }),
  ];
}
