import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { embeddedWorkerName, ensureInitialAdmin } from '@baton/core';
import { resolveSandboxMode, type Sandbox } from '@baton/executor';
import { DEFAULT_LEASE_MS } from '@baton/queue';
import type { Express } from 'express';
import type { Logger } from 'winston';
import { createApp } from './app.js';
import { answerClientErrors } from './http/client-error.js';
import { databaseGauges } from './system/metrics.js';
import type { Config } from './config/config.js';
import { ConfigError } from './config/config.js';
import { createLogger } from './logger.js';
import { type EmbeddedMode, startEmbeddedMode } from './runs/embedded-mode.js';
import { sandboxHiddenPaths } from './runs/sandbox-paths.js';
import { startScheduler } from './schedules/scheduler.js';
import { startTickLoop } from './system/tick-loop.js';
import { startRetentionLoop } from './system/retention-loop.js';
import { acquireServeLock, serveLockFile } from './runs/serve-lock.js';
import { openRuntime } from './runtime.js';

async function listen(app: Express, config: Config): Promise<http.Server> {
  try {
    return await new Promise<http.Server>((resolve, reject) => {
      const s = app.listen(config.port, config.host, (err?: Error) => (err ? reject(err) : resolve(s)));
      s.once('error', reject);
      answerClientErrors(s);
    });
  } catch (err) {
    // Port taken, address not on this host, no permission: the operator fixes it in the configuration.
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new ConfigError(`cannot listen on ${config.host}:${config.port} (BATON_HOST, BATON_PORT): ${code}`);
  }
}

/** `baton serve`: migrate, make sure an admin exists, listen, and stop gracefully on SIGTERM/SIGINT. */
export async function serve(
  config: Config,
  out: { print(line: string): void } = { print: (l) => console.log(l) },
): Promise<{ server: http.Server; stop(): Promise<void>; logger: Logger }> {
  const logger = createLogger(config.logLevel);
  const sandboxMode = await resolveSandboxMode(config.sandbox).catch((err: Error) => {
    throw new ConfigError(err.message);
  });
  const sandbox: Sandbox = { mode: sandboxMode, hidden: sandboxHiddenPaths(config), priority: config.runPriority };
  // Before the database is even opened: a second server on one SQLite database changes nothing, not even a migration.
  const lockFile = serveLockFile(config.databaseUrl);
  const lock = lockFile ? acquireServeLock(lockFile) : undefined;
  try {
    return await start(config, out, { logger, sandbox, release: () => lock?.release() });
  } catch (err) {
    lock?.release();
    throw err;
  }
}

async function start(
  config: Config,
  out: { print(line: string): void },
  opts: { logger: Logger; sandbox: Sandbox; release: () => void },
): Promise<{ server: http.Server; stop(): Promise<void>; logger: Logger }> {
  const { logger, sandbox } = opts;
  const rt = await openRuntime(config, {
    createKey: true,
    sandbox,
    queueMode: true,
    reportError: (err) =>
      logger.error('runs: an error no request could be told of', { error: (err as Error)?.message ?? String(err) }),
  });
  // /readyz answers 503 until the executors run: the start-up reconcile has settled every run by then.
  let started = false;
  let server: http.Server | undefined;
  let embedded: EmbeddedMode;
  try {
    const admin = await ensureInitialAdmin({
      users: rt.db.repos.users,
      userService: rt.services.users,
      password: config.adminPassword,
    });
    if (admin.created) {
      out.print(
        admin.generatedPassword
          ? `Created user "admin" (role admin). Its password, shown this once: ${admin.generatedPassword}`
          : 'Created user "admin" (role admin) with the password from BATON_ADMIN_PASSWORD.',
      );
    }
    const { app } = createApp({
      services: rt.services,
      ping: async () => {
        if (!started) throw new Error('starting');
        await rt.db.ping().catch(() => {
          throw new Error('database unreachable');
        });
        await embedded.ping?.().catch(() => {
          throw new Error('Redis unreachable');
        });
      },
      gauges: databaseGauges(rt.db),
      logger,
      bodyLimitBytes: config.bodyLimitBytes,
      trustProxy: config.trustProxy,
      uiDir: config.uiDir,
      metricsToken: config.metricsToken,
    });
    // The port first: a server that cannot listen must not reconcile (finish or requeue) anything.
    server = await listen(app, config);
    const executorOptions = {
      executors: config.executors,
      workDir: config.workDir,
      requirementsCache: path.join(config.dataDir, 'requirements'),
      fetchDenyPrivate: config.fetchDenyPrivate,
      preloadPython: config.runPreload,
      outputLimitBytes: config.runOutputLimitBytes,
      logger,
      leaseMs: DEFAULT_LEASE_MS,
      sandbox,
      executorProcess: true,
      executorIdleMs: config.executorIdleSeconds * 1000,
      name: embeddedWorkerName(os.hostname(), process.pid),
    };
    // Queue mode: worker daemons run the playbooks; this replica ingests their events and may lead the recovery sweep.
    // Embedded mode: reconcile what a previous process left, then run executors in this process, named after it.
    if (config.redisUrl) {
      // Loaded only here: queue-mode.js brings the Redis implementations (BullMQ, ioredis).
      const { startQueueMode } = await import('./runs/queue-mode.js');
      embedded = await startQueueMode(rt.services, {
        ...executorOptions,
        redisUrl: config.redisUrl,
        prefix: config.queuePrefix,
        database: rt.db.dialect,
      });
    } else embedded = await startEmbeddedMode(rt.services, executorOptions);
  } catch (err) {
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server!.close(() => resolve()));
    }
    await rt.services.closeRuns().catch(() => {});
    await rt.db.close().catch(() => {});
    throw err;
  }
  started = true;
  // Every replica runs the scheduler: a due time is fired by whichever claims it first in the database.
  const scheduler = startScheduler(rt.services, { logger });
  // Every replica also sends notifications: each outbox entry and delivery is claimed by one of them in the database.
  const notifications = startTickLoop(
    async () => {
      await rt.services.notifySender.tick();
    },
    { logger, intervalMs: 1000, what: 'notification sender' },
  );
  // BATON_RETENTION_DAYS: old runs lose their output hourly (in queue mode on the leader replica only).
  const retention = config.retentionDays
    ? startRetentionLoop(rt.services, { days: config.retentionDays, logger, leads: () => embedded.leads?.() ?? true })
    : undefined;
  logger.info('executors', {
    count: config.executors,
    sandbox: sandbox.mode,
    work_dir: config.workDir,
    name: embedded.executors.name,
    mode: config.redisUrl ? 'queue' : 'embedded',
  });
  const listening = server;
  const address = listening.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  logger.info('listening', {
    url: `http://${config.host}:${port}/`,
    database: rt.db.dialect,
    data_dir: config.dataDir,
  });

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      logger.info('shutting down');
      // Stop accepting, let in-flight requests finish, then cut whatever is left after the grace period.
      const closed = new Promise<void>((resolve) => listening.close(() => resolve()));
      listening.closeIdleConnections();
      const grace = setTimeout(() => listening.closeAllConnections(), config.shutdownGraceSeconds * 1000);
      await Promise.all([scheduler.stop(), notifications.stop(), retention?.stop()]);
      // Running runs get their own grace period, then are canceled; their final events still reach SSE clients.
      await Promise.all([closed, embedded.stop(config.runGraceSeconds * 1000)]);
      clearTimeout(grace);
      await rt.db.close();
      opts.release();
      logger.info('stopped');
    })());
  return { server: listening, stop, logger };
}
