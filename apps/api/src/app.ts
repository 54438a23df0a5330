import express, { type Express } from 'express';
import type { Logger } from 'winston';
import { auditRoutes } from './audit/audit.routes.js';
import { observationRoutes } from './observation/observation.routes.js';
import { aiRoutes } from './ai/ai.routes.js';
import { importBodyParser } from './import/import-body.js';
import { importRoutes } from './import/import.routes.js';
import { notifierRoutes } from './notifiers/notifier.routes.js';
import { knownHostRoutes } from './known-hosts/known-host.routes.js';
import { authRoutes } from './auth/auth.routes.js';
import { credentialRoutes } from './credentials/credential.routes.js';
import { grantRoutes } from './grants/grant.routes.js';
import { inventoryRoutes } from './inventories/inventory.routes.js';
import { inventorySourceRoutes } from './inventory-sources/inventory-source.routes.js';
import { jsonBody } from './http/json-body.js';
import { accessLog, requestId } from './http/middleware.js';
import { buildOpenApi } from './http/openapi.js';
import { errorHandler, notFoundHandler } from './http/problem.js';
import { mountOperations, type Operation } from './http/registry.js';
import { pipelineRoutes } from './pipelines/pipeline.routes.js';
import { policyRoutes } from './policies/policy.routes.js';
import { projectRoutes } from './projects/project.routes.js';
import { scheduleRoutes } from './schedules/schedule.routes.js';
import { templateRoutes } from './templates/template.routes.js';
import { mountHooks } from './triggers/hooks.js';
import { triggerRoutes } from './triggers/trigger.routes.js';
import { runOutputRoutes } from './runs/run-output.routes.js';
import { runRoutes } from './runs/run.routes.js';
import { mountSamlAcs, samlRoutes } from './sso/saml.routes.js';
import { oidcRoutes } from './sso/oidc.routes.js';
import { ssoRoutes } from './sso/sso.routes.js';
import { createMetrics, type Gauges } from './system/metrics.js';
import { DEFAULT_UI_DIR, mountDocs, mountUi } from './system/static.js';
import { systemRoutes } from './system/system.routes.js';
import { teamRoutes } from './teams/team.routes.js';
import { tokenRoutes } from './tokens/token.routes.js';
import { userRoutes } from './users/user.routes.js';
import { workerRoutes } from './workers/worker.routes.js';
import type { Services } from './wiring.js';

export const VERSION = '0.1.0';

export interface AppDeps {
  services: Services;
  ping(): Promise<void>;
  gauges: Gauges;
  logger: Logger;
  bodyLimitBytes: number;
  trustProxy: boolean;
  uiDir?: string | undefined;
  /** BATON_METRICS_TOKEN: when set, GET /metrics wants it as a bearer token */
  metricsToken?: string | undefined;
}

/** The Express app: every operation comes from the registry; everything else is problem+json. */
export function createApp(deps: AppDeps): { app: Express; operations: Operation[] } {
  const app = express();
  app.disable('x-powered-by');
  // Behind a reverse proxy, trust exactly that one hop: the address it appended to X-Forwarded-For. `true`
  // would take the left-most entry, which the client writes itself (and so dodges sign-in rate limits).
  app.set('trust proxy', deps.trustProxy ? 1 : false);
  app.set('query parser', 'simple');
  const s = deps.services;
  const metrics = createMetrics(deps.gauges, s.runMetrics, s.aiMetrics.metrics);

  let openapi: Record<string, unknown> | undefined;
  const operations: Operation[] = [
    ...systemRoutes({
      ping: deps.ping,
      metrics,
      metricsToken: deps.metricsToken,
      openapi: () => (openapi ??= buildOpenApi(operations, { version: VERSION })),
    }),
    ...authRoutes(s),
    // Sign-in methods on offer: the UI shows a single sign-on button only for a configured method.
    ...ssoRoutes(s, { methods: { password: true, oidc: s.oidc !== undefined, saml: s.saml !== undefined } }),
    ...oidcRoutes(s.oidc),
    ...samlRoutes(s),
    ...tokenRoutes(s),
    ...userRoutes(s),
    ...teamRoutes(s),
    ...grantRoutes(s),
    ...auditRoutes(s),
    ...credentialRoutes(s),
    ...projectRoutes(s),
    ...inventoryRoutes(s),
    ...inventorySourceRoutes(s),
    ...workerRoutes(s),
    ...runRoutes(s),
    ...pipelineRoutes(s),
    ...templateRoutes(s),
    ...scheduleRoutes(s),
    ...triggerRoutes(s),
    ...policyRoutes(s),
    ...observationRoutes(s),
    ...aiRoutes(s),
    ...importRoutes(s),
    ...notifierRoutes(s),
    ...knownHostRoutes(s),
    ...runOutputRoutes(s, {
      streams: metrics.streams,
      onStreamError: (err) => deps.logger.error('run stream failed', { error: (err as Error)?.message ?? String(err) }),
    }),
  ];

  app.use(requestId);
  app.use(accessLog(deps.logger, metrics.http));
  // Webhooks read their raw body (the signature covers its bytes), so they come before the JSON parser.
  mountHooks(app, s, deps.logger);
  // The SAML assertion consumer service reads an HTML form post, likewise before the JSON parser.
  mountSamlAcs(app);
  app.use(
    ['/v1/import', '/import'],
    importBodyParser((t) => s.auth.authenticate(t)),
  );
  app.use(jsonBody(deps.bodyLimitBytes));
  mountOperations(app, operations, { authenticate: (t) => s.auth.authenticate(t) });
  mountDocs(app);
  mountUi(app, deps.uiDir ?? DEFAULT_UI_DIR);
  app.use(notFoundHandler);
  app.use(errorHandler(deps.logger));
  return { app, operations };
}
