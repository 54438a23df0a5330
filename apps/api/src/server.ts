import type http from 'node:http';
import path from 'node:path';
import { ensureInitialAdmin } from '@baton/core';
import { resolveSandboxMode, type Sandbox } from '@baton/executor';
import { DEFAULT_LEASE_MS } from '@baton/queue';
import type { Logger } from 'winston';
import { createApp } from './app.js';
import type { Config } from './config/config.js';
import { ConfigError } from './config/config.js';
import { createLogger } from './logger.js';
import { startEmbeddedMode } from './runs/embedded-mode.js';
import { openRuntime } from './runtime.js';

/** What a sandboxed child must not see: the data dir (master key, SQLite database) and a database file kept elsewhere. */
function sandboxHiddenPaths(config: Config): string[] {
  const hidden = [config.dataDir];
  const sqlite = /^sqlite:(?:\/\/)?(.+)$/.exec(config.databaseUrl)?.[1];
  if (sqlite) hidden.push(path.dirname(path.resolve(sqlite)));
  return [...new Set(hidden)];
}

/** `baton serve`: migrate, make sure an admin exists, listen, and stop gracefully on SIGTERM/SIGINT. */
export async function serve(config: Config, out: { print(line: string): void } = { print: (l) => console.log(l) }): Promise<{ server: http.Server; stop(): Promise<void>; logger: Logger }> {
  if (config.redisUrl) {
    throw new ConfigError('BATON_REDIS_URL is set, but queue mode is not part of this build yet; unset it to run embedded');
  }
  const logger = createLogger(config.logLevel);
  const sandboxMode = await resolveSandboxMode(config.sandbox).catch((err: Error) => {
    throw new ConfigError(err.message);
  });
  const sandbox: Sandbox = { mode: sandboxMode, hidden: sandboxHiddenPaths(config) };
  const rt = await openRuntime(config, { createKey: true, sandbox });
  const admin = await ensureInitialAdmin({ users: rt.db.repos.users, userService: rt.services.users, password: config.adminPassword });
  if (admin.created) {
    out.print(
      admin.generatedPassword
        ? `Created user "admin" (role admin). Its password, shown this once: ${admin.generatedPassword}`
        : 'Created user "admin" (role admin) with the password from BATON_ADMIN_PASSWORD.',
    );
  }

  // Embedded mode: reconcile what a previous process left, then run executors in this process.
  const embedded = await startEmbeddedMode(rt.services, {
    executors: config.executors, workDir: config.workDir, logger, leaseMs: DEFAULT_LEASE_MS,
    sandbox,
  });
  logger.info('executors', { count: config.executors, sandbox: sandboxMode, work_dir: config.workDir });

  const { app } = createApp({
    services: rt.services,
    ping: () => rt.db.ping(),
    gauges: { usersByRole: () => rt.db.repos.users.countByRole(), auditEntries: async () => (await rt.db.repos.audit.head()).seq },
    logger,
    bodyLimitBytes: config.bodyLimitBytes,
    trustProxy: config.trustProxy,
    uiDir: config.uiDir,
  });

  let server: http.Server;
  try {
    server = await new Promise<http.Server>((resolve, reject) => {
      const s = app.listen(config.port, config.host, (err?: Error) => (err ? reject(err) : resolve(s)));
      s.once('error', reject);
    });
  } catch (err) {
    await embedded.stop(0).catch(() => {});
    await rt.db.close().catch(() => {});
    // Port taken, address not on this host, no permission: the operator fixes it in the configuration.
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new ConfigError(`cannot listen on ${config.host}:${config.port} (BATON_HOST, BATON_PORT): ${code}`);
  }
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  logger.info('listening', { url: `http://${config.host}:${port}/`, database: rt.db.dialect, data_dir: config.dataDir });

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      logger.info('shutting down');
      // Stop accepting, let in-flight requests finish, then cut whatever is left after the grace period.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const grace = setTimeout(() => server.closeAllConnections(), config.shutdownGraceSeconds * 1000);
      // Running runs get their own grace period, then are canceled; their final events still reach SSE clients.
      await Promise.all([closed, embedded.stop(config.runGraceSeconds * 1000)]);
      clearTimeout(grace);
      await rt.db.close();
      logger.info('stopped');
    })());
  return { server, stop, logger };
}
