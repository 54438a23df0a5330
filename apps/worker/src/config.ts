// `baton worker` settings: flags and environment, checked before anything connects. The same variables as
// `baton serve` (apps/api/src/config/config.ts) follow the same rules: an empty value counts as unset, numbers
// are decimal digits only, and every bad value is reported with the variable's name.
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  keyFromEnvOrFile,
  parseWorkerKey,
  RUN_PRIORITIES,
  type RunPriority,
  SANDBOX_SETTINGS,
  type SandboxSetting,
} from '@baton/executor';
import { redisConnectionString } from '@baton/queue';

export const HELP = `Usage: baton worker [--concurrency N] [--labels a,b] [--name NAME]

Leases run jobs from Redis, runs ansible-playbook and publishes the runs' events. Needs only Redis and the
worker key; never opens the database. SIGTERM or SIGINT stops it gracefully (a second one at once).

Options (each wins over its variable):
  --concurrency N   runs at once, 1..256 (BATON_WORKER_CONCURRENCY, default 2)
  --labels a,b      labels runs may ask for (BATON_WORKER_LABELS)
  --name NAME       the worker's name, unique per installation (BATON_WORKER_NAME, default the host name)
  -h, --help        this text

Environment:
  BATON_REDIS_URL           redis:// or rediss:// URL (required unless BATON_REDIS_SENTINELS is set)
  BATON_REDIS_SENTINELS     host:port,host:port: find the master through these Redis Sentinels
  BATON_REDIS_SENTINEL_NAME the master group the Sentinels watch (required with BATON_REDIS_SENTINELS)
  BATON_REDIS_CA_FILE       PEM certificates a rediss:// server's certificate must chain to
  BATON_WORKER_KEY          the key run bundles are sealed with, as on the API (required)
  BATON_WORKER_KEY_FILE     or a file holding it (mode 0600 or stricter), so it is not in the environment
  BATON_QUEUE_PREFIX        namespace of every Redis key (default baton)
  BATON_WORK_DIR            parent of the private run directories (default the system temp directory)
  BATON_SANDBOX             auto | bwrap | off (default auto)
  BATON_RUN_PRIORITY        idle | low | normal: the CPU priority of ansible-playbook (default idle)
  BATON_RUN_PRELOAD         false: a fresh ansible-playbook for each run, no Python loaded ahead (default true)
  BATON_FETCH_DENY_PRIVATE  true: refuse checkouts and Galaxy servers at loopback or private addresses (default false)
  BATON_RUN_GRACE_SECONDS   on stop, how long running runs may go on before they are canceled (default 60)
  BATON_RUN_OUTPUT_LIMIT_MB mebibytes of output a run's log keeps, 1..2047; set it as on the API (default 100)
  BATON_WORKER_BUFFER_MB    events held while Redis is unreachable past which no new run is leased (default 64)
  BATON_RETENTION_DAYS      Galaxy requirements cache entries unused this many days are removed, hourly (default keep)
  BATON_LOG_LEVEL           error | warn | info | debug (default info)`;

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';
const LOG_LEVELS: readonly LogLevel[] = ['error', 'warn', 'info', 'debug'];

export interface WorkerConfig {
  /** BATON_REDIS_* as one connection string (redisConnectionString in @baton/queue) */
  redisUrl: string;
  /** 32 bytes; read once, then removed from the environment */
  workerKey: Buffer;
  prefix: string;
  concurrency: number;
  labels: string[];
  name: string;
  workDir: string;
  sandbox: SandboxSetting;
  /** BATON_RUN_PRIORITY: the CPU priority of ansible-playbook and ansible-galaxy */
  runPriority: RunPriority;
  /** BATON_RUN_PRELOAD: ansible-playbook runs in a Python that loaded ansible's libraries before the run came */
  runPreload: boolean;
  /** BATON_FETCH_DENY_PRIVATE: checkouts and Galaxy servers may not be at loopback or private addresses */
  fetchDenyPrivate: boolean;
  runGraceSeconds: number;
  /** BATON_RUN_OUTPUT_LIMIT_MB in bytes: past it the log is cut with a notice and events keep only metadata */
  runOutputLimitBytes: number;
  /** BATON_WORKER_BUFFER_MB: unsent run events (bytes of JSON) past which the worker leases no new run */
  bufferMb: number;
  /** BATON_RETENTION_DAYS, as on the API: requirements cache entries unused this long are pruned; undefined: kept */
  retentionDays: number | undefined;
  logLevel: LogLevel;
}

export type WorkerCommand = { kind: 'help'; text: string } | { kind: 'run'; config: WorkerConfig };

/** A bad flag or variable: `baton worker` exits with code 2 and this message. */
export class WorkerConfigError extends Error {
  override readonly name = 'WorkerConfigError';
}

const PREFIX_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;
const LABEL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
/** 1..200 characters, none of them a control, format or unassigned character. */
const NAME_PATTERN = /^[^\p{C}]{1,200}$/u;
/** setTimeout's limit is about 24.8 days; a day of grace is plenty. */
const MAX_GRACE_SECONDS = 86_400;
/** The unsent-event buffer: a worker cut off from Redis stops leasing past it (it never drops events). */
export const DEFAULT_BUFFER_MB = 64;
const MAX_BUFFER_MB = 65_536;

/** Decimal digits only, like `baton serve`: Number() would read " " as 0 and "0x10" as 16. */
function wholeNumber(text: string, min: number, max: number, what: string): number {
  const t = text.trim();
  if (!/^[0-9]+$/.test(t)) throw new WorkerConfigError(`${what}: must be a whole number in decimal digits`);
  const n = Number(t);
  if (n < min || n > max) throw new WorkerConfigError(`${what}: must be between ${min} and ${max}`);
  return n;
}

function parseLabels(text: string, what: string): string[] {
  const labels: string[] = [];
  for (const item of text.split(',').map((l) => l.trim())) {
    if (item === '') continue; // "a,b," and "" are fine: no label there
    if (!LABEL_PATTERN.test(item)) {
      throw new WorkerConfigError(
        `${what}: ${JSON.stringify(item.slice(0, 80))} is not a label (letters, digits and _ . : -, starting with a letter or digit, at most 64)`,
      );
    }
    if (!labels.includes(item)) labels.push(item);
  }
  return labels;
}

function parseFlags(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      options: {
        help: { type: 'boolean', short: 'h' },
        concurrency: { type: 'string' },
        labels: { type: 'string' },
        name: { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (err) {
    throw new WorkerConfigError(`${(err as Error).message}\n\n${HELP}`);
  }
}

/**
 * Reads the flags and the environment. BATON_WORKER_KEY is deleted from `env` as soon as it is read, valid or
 * not, so no child process (ansible, ssh-agent, git) can ever inherit it.
 */
export function loadWorkerConfig(argv: string[], env: NodeJS.ProcessEnv = process.env): WorkerCommand {
  // Inline or from BATON_WORKER_KEY_FILE (read once here); the inline one leaves the environment at once.
  const fromEnvOrFile = keyFromEnvOrFile(env, 'BATON_WORKER_KEY');
  delete env.BATON_WORKER_KEY;
  const flags = parseFlags(argv);
  if (flags.help) return { kind: 'help', text: HELP };
  // As for `baton serve`: an empty variable is an unset one.
  const read = (name: string): string | undefined => (env[name] === '' ? undefined : env[name]);

  const problems: string[] = [];
  const check = <T>(fn: () => T): T | undefined => {
    try {
      return fn();
    } catch (err) {
      problems.push((err as Error).message);
      return undefined;
    }
  };

  const redisUrl = check(() => {
    const url = read('BATON_REDIS_URL');
    const sentinels = read('BATON_REDIS_SENTINELS');
    if (url === undefined && sentinels === undefined)
      throw new WorkerConfigError('BATON_REDIS_URL: must be set (a worker needs Redis)');
    if (url !== undefined && !/^rediss?:\/\/\S+$/.test(url))
      throw new WorkerConfigError('BATON_REDIS_URL: must start with redis:// or rediss://');
    try {
      return redisConnectionString({
        url,
        sentinels,
        sentinelName: read('BATON_REDIS_SENTINEL_NAME'),
        caFile: read('BATON_REDIS_CA_FILE'),
      })!;
    } catch (err) {
      throw new WorkerConfigError((err as Error).message);
    }
  });
  const workerKey = check(() => {
    if ('problem' in fromEnvOrFile) throw new WorkerConfigError(fromEnvOrFile.problem);
    const rawKey = fromEnvOrFile.key;
    if (rawKey === undefined)
      throw new WorkerConfigError(
        'BATON_WORKER_KEY: must be set, or BATON_WORKER_KEY_FILE (the key run bundles are sealed with)',
      );
    try {
      return parseWorkerKey(rawKey);
    } catch (err) {
      throw new WorkerConfigError(`BATON_WORKER_KEY: ${(err as Error).message}`);
    }
  });
  const prefix = check(() => {
    const p = read('BATON_QUEUE_PREFIX') ?? 'baton';
    if (!PREFIX_PATTERN.test(p))
      throw new WorkerConfigError('BATON_QUEUE_PREFIX: must be 1 to 64 letters, digits, _ . or -');
    return p;
  });
  const concurrency = check(() => {
    const [text, what] =
      flags.concurrency !== undefined
        ? [flags.concurrency, '--concurrency']
        : [read('BATON_WORKER_CONCURRENCY'), 'BATON_WORKER_CONCURRENCY'];
    return text === undefined ? 2 : wholeNumber(text, 1, 256, what);
  });
  const labels = check(() => {
    const [text, what] =
      flags.labels !== undefined ? [flags.labels, '--labels'] : [read('BATON_WORKER_LABELS'), 'BATON_WORKER_LABELS'];
    return text === undefined ? [] : parseLabels(text, what);
  });
  const name = check(() => {
    const [text, what] =
      flags.name !== undefined ? [flags.name, '--name'] : [read('BATON_WORKER_NAME'), 'BATON_WORKER_NAME'];
    const value = text ?? os.hostname();
    if (!NAME_PATTERN.test(value))
      throw new WorkerConfigError(
        `${text === undefined ? 'the host name (set BATON_WORKER_NAME)' : what}: must be 1 to 200 printable characters`,
      );
    return value;
  });
  const workDir = path.resolve(read('BATON_WORK_DIR') ?? os.tmpdir());
  const sandbox = check(() => {
    const s = read('BATON_SANDBOX') ?? 'auto';
    if (!(SANDBOX_SETTINGS as readonly string[]).includes(s))
      throw new WorkerConfigError(`BATON_SANDBOX: must be one of ${SANDBOX_SETTINGS.join(', ')}`);
    return s as SandboxSetting;
  });
  const runPriority = check(() => {
    const s = read('BATON_RUN_PRIORITY') ?? 'idle';
    if (!(RUN_PRIORITIES as readonly string[]).includes(s))
      throw new WorkerConfigError(`BATON_RUN_PRIORITY: must be one of ${RUN_PRIORITIES.join(', ')}`);
    return s as RunPriority;
  });
  const runPreload = check(() => {
    const v = read('BATON_RUN_PRELOAD') ?? 'true';
    if (v !== 'true' && v !== 'false') throw new WorkerConfigError('BATON_RUN_PRELOAD: must be true or false');
    return v === 'true';
  });
  const fetchDenyPrivate = check(() => {
    const v = read('BATON_FETCH_DENY_PRIVATE') ?? 'false';
    if (v !== 'true' && v !== 'false') throw new WorkerConfigError('BATON_FETCH_DENY_PRIVATE: must be true or false');
    return v === 'true';
  });
  const runGraceSeconds = check(() => {
    const text = read('BATON_RUN_GRACE_SECONDS');
    return text === undefined ? 60 : wholeNumber(text, 1, MAX_GRACE_SECONDS, 'BATON_RUN_GRACE_SECONDS');
  });
  const bufferMb = check(() => {
    const text = read('BATON_WORKER_BUFFER_MB');
    return text === undefined ? DEFAULT_BUFFER_MB : wholeNumber(text, 1, MAX_BUFFER_MB, 'BATON_WORKER_BUFFER_MB');
  });
  const runOutputLimitMb = check(() => {
    const text = read('BATON_RUN_OUTPUT_LIMIT_MB');
    // At most 2047, as on the API: a log's byte count is a 32-bit column in PostgreSQL.
    return text === undefined ? 100 : wholeNumber(text, 1, 2047, 'BATON_RUN_OUTPUT_LIMIT_MB');
  });
  const retentionDays = check(() => {
    const text = read('BATON_RETENTION_DAYS');
    // The API's range (apps/api/src/config/config.ts): one setting for the whole installation.
    return text === undefined ? undefined : wholeNumber(text, 1, 36_500, 'BATON_RETENTION_DAYS');
  });
  const logLevel = check(() => {
    const l = read('BATON_LOG_LEVEL') ?? 'info';
    if (!(LOG_LEVELS as readonly string[]).includes(l))
      throw new WorkerConfigError(`BATON_LOG_LEVEL: must be one of ${LOG_LEVELS.join(', ')}`);
    return l as LogLevel;
  });

  if (problems.length)
    throw new WorkerConfigError(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  return {
    kind: 'run',
    config: {
      redisUrl: redisUrl!,
      workerKey: workerKey!,
      prefix: prefix!,
      concurrency: concurrency!,
      labels: labels!,
      name: name!,
      workDir,
      sandbox: sandbox!,
      runPriority: runPriority!,
      runPreload: runPreload!,
      fetchDenyPrivate: fetchDenyPrivate!,
      runGraceSeconds: runGraceSeconds!,
      runOutputLimitBytes: runOutputLimitMb! * 1024 * 1024,
      bufferMb: bufferMb!,
      retentionDays,
      logLevel: logLevel!,
    },
  };
}
