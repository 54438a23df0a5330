import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { assertKeyringOpensSecrets, type Clock, systemClock, type ThrottleLimits } from '@baton/core';
import { type Database, openDatabase } from '@baton/db';
import { parseWorkerKey, type Sandbox } from '@baton/executor';
import type { Config } from './config/config.js';
import { ConfigError } from './config/config.js';
import { loadKeyring } from './config/master-key.js';
import { loadQueueRedis } from './runs/run.wiring.js';
import { createServices, loadSaml, type Services } from './wiring.js';

export interface Runtime {
  config: Config;
  db: Database;
  services: Services;
}

function readSigningKey(file: string | undefined): crypto.KeyObject | undefined {
  if (!file) return undefined;
  try {
    const key = crypto.createPrivateKey(fs.readFileSync(file));
    if (key.asymmetricKeyType !== 'ed25519') throw new Error('not an Ed25519 private key');
    return key;
  } catch (err) {
    throw new ConfigError(`BATON_AUDIT_SIGNING_KEY_FILE (${file}): ${(err as Error).message}`);
  }
}

/** Opens what every command needs: data dir, master keyring, database (migrated) and services. */
export async function openRuntime(
  config: Config,
  opts: {
    createKey: boolean;
    clock?: Clock;
    throttle?: ThrottleLimits;
    sandbox?: Sandbox;
    reportError?: (err: unknown) => void;
    leaseMs?: number;
    queueMode?: boolean;
  },
): Promise<Runtime> {
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const keyring = loadKeyring({ masterKey: config.masterKey, dataDir: config.dataDir, create: opts.createKey });
  const auditSigningKey = readSigningKey(config.auditSigningKeyFile);
  const db = openDatabase(config.databaseUrl, { poolSize: config.databasePool, caFile: config.databaseCaFile });
  try {
    await db.migrate();
  } catch (err) {
    await db.close().catch(() => {});
    throw new ConfigError(
      `BATON_DATABASE_URL: cannot open and migrate the ${db.dialect} database: ${(err as Error).message}`,
    );
  }
  try {
    await assertKeyringOpensSecrets(db.repos.secretColumns, keyring);
  } catch (err) {
    await db.close().catch(() => {});
    throw new ConfigError((err as Error).message);
  }
  const services = createServices(db, {
    keyring,
    clock: opts.clock ?? systemClock,
    tokenTtlSeconds: config.tokenTtlSeconds,
    throttle: opts.throttle,
    auditSigningKey,
    sandbox: opts.sandbox,
    reportError: opts.reportError,
    leaseMs: opts.leaseMs,
    publicUrl: config.publicUrl,
    sso: config.sso,
    oidc: config.oidc,
    saml: config.saml && { settings: config.saml, module: await loadSaml() },
    ai: { environment: config.aiProvider, askRate: config.aiAskRate },
    notify: { allowPrivate: config.notifyAllowPrivate },
    fetchDenyPrivate: config.fetchDenyPrivate,
    runOutputLimitBytes: config.runOutputLimitBytes,
    requirementsCache: path.join(config.dataDir, 'requirements'),
    // Only `baton serve` talks to Redis; the other commands never enqueue.
    queueMode:
      opts.queueMode && config.redisUrl && config.workerKey
        ? {
            redisUrl: config.redisUrl,
            prefix: config.queuePrefix,
            workerKey: parseWorkerKey(config.workerKey),
            redis: await loadQueueRedis(),
          }
        : undefined,
  });
  return { config, db, services };
}
