#!/usr/bin/env node
// `bin/baton` hands every subcommand except `worker` to this file.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { MasterKey } from '@baton/core';
import type { Config } from './config/config.js';
import type { Runtime } from './runtime.js';

// Every other module is imported where a command needs it: `--help` and a usage error load nothing else (0.06 s
// instead of 0.5 s, most of it module loading), and only `serve` loads the HTTP server.

const HELP: Record<string, string> = {
  main: `Usage: baton <command> [options]

Commands:
  serve                     start the API, UI and (embedded mode) executors
  worker                    start a worker daemon (queue mode)
  migrate                   apply database migrations and exit
  user create               create a user
  user set-password         set a user's password
  user list                 list users
  key rotate                re-encrypt every stored secret under a new master key
  prune                     remove the log and events of runs older than the retention period
  backup                    copy the embedded database (and the master key) while serve runs
  restore                   put a backup in place in a data dir

Run "baton <command> --help" for a command's options. Configuration comes from BATON_* environment
variables (see the README).`,
  serve: `Usage: baton serve

Starts Baton: migrates the database, creates user "admin" on first start (password from
BATON_ADMIN_PASSWORD, else printed once), then listens on BATON_HOST:BATON_PORT (127.0.0.1:8080).
SIGTERM or SIGINT stops it gracefully.`,
  migrate: `Usage: baton migrate

Applies pending migrations to BATON_DATABASE_URL (default: SQLite in BATON_DATA_DIR) and exits.`,
  'user create': `Usage: baton user create --username NAME --role admin|operator|viewer [--email ADDR] [--password-stdin]

Creates a user. The password is read from the first line of standard input with --password-stdin
(never pass it as an argument: other users can see arguments); without it one is generated and printed once.`,
  'user set-password': `Usage: baton user set-password --username NAME [--password-stdin]

Sets a user's password (read from standard input, or generated and printed once) and ends their sessions.`,
  'user list': `Usage: baton user list

Prints id, username and role of every user.`,
  user: `Usage: baton user <create|set-password|list> [options]

  user create               create a user
  user set-password         set a user's password
  user list                 list users

Run "baton user <command> --help" for a command's options.`,
  key: `Usage: baton key rotate [--new-key-stdin]

  key rotate                re-encrypt every stored secret under a new master key

Run "baton key rotate --help" for details.`,
  'key rotate': `Usage: baton key rotate [--new-key-stdin]

Generates a new master key (or reads one, 64 hex digits or base64, from standard input with
--new-key-stdin) and re-encrypts every stored secret under it in one transaction. Stop every
"baton serve" first. With <data>/master.key the file is replaced; with BATON_MASTER_KEY the new key is
printed and must be set as BATON_MASTER_KEY before the next start.`,
  prune: `Usage: baton prune [--dry-run] [--days N]

Removes the log and events of every finished run that finished more than N days ago (default
BATON_RETENTION_DAYS), in small batches, keeping the run, its per-host outcomes and what fleet, task
trends and drift read; also Galaxy requirements cache entries unused for as long. Safe beside a
running server. --dry-run prints what would go and changes nothing. Records one audit entry.`,
  backup: `Usage: baton backup <file> [--with-key <keyfile>]

Copies the embedded (SQLite) database to <file> (mode 0600) while baton serve may be running: one
consistent snapshot, taken with SQLite's backup API. With --with-key the master key goes to <keyfile>
(mode 0600): keep the two apart. For PostgreSQL use pg_dump (README, "Backup and restore").`,
  restore: `Usage: baton restore <file> [--data-dir DIR] [--key <keyfile>] [--force]

Checks that <file> is a Baton database this version can run (and, with --key, that the key opens its
secrets), then makes it the database of DIR (default BATON_DATA_DIR), with the key as its master.key.
Refuses a data dir that has a database (or a master.key, with --key) unless --force, and any data dir
a baton serve is using.`,
};

class UsageError extends Error {}

async function readStdinLine(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '';
}

function check<T>(
  schema: {
    safeParse(v: unknown): { success: true; data: T } | { success: false; error: { issues: { message: string }[] } };
  },
  value: unknown,
  name: string,
): T {
  const r = schema.safeParse(value);
  if (!r.success) throw new UsageError(`${name}: ${r.error.issues.map((i) => i.message).join('; ')}`);
  return r.data;
}

async function passwordFrom(stdin: boolean | undefined): Promise<{ password: string; generated: boolean }> {
  if (stdin) {
    const { Password } = await import('@baton/contracts');
    return { password: check(Password, await readStdinLine(), 'password'), generated: false };
  }
  const { randomBytes } = await import('node:crypto');
  return { password: randomBytes(18).toString('base64url'), generated: true };
}

async function withRuntime<T>(config: Config, fn: (rt: Runtime) => Promise<T>): Promise<T> {
  const { openRuntime } = await import('./runtime.js');
  const rt = await openRuntime(config, { createKey: true });
  try {
    return await fn(rt);
  } finally {
    await rt.db.close();
  }
}

/**
 * Never beside a running server on the same SQLite database: it keeps sealing new secrets under the old key while
 * this re-seals the stored ones. Holding the serve lock for the whole rotation also keeps a server from starting
 * half-way through. (PostgreSQL has no serve lock: stop every replica first, as the README says.)
 */
async function keyRotate(config: Config, newKeyFromStdin: boolean): Promise<void> {
  const { acquireServeLock, serveLockFile } = await import('./runs/serve-lock.js');
  const { ConfigError } = await import('./config/config.js');
  const lockFile = serveLockFile(config.databaseUrl);
  let lock: { release(): void } | undefined;
  try {
    lock = lockFile ? acquireServeLock(lockFile) : undefined;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new ConfigError(
      `stop the running baton serve first: key rotate re-seals every stored secret, and a running server would go on sealing under the old key (${err.message})`,
    );
  }
  try {
    await rotateMasterKey(config, newKeyFromStdin);
  } finally {
    lock?.release();
  }
}

async function rotateMasterKey(config: Config, newKeyFromStdin: boolean): Promise<void> {
  const [
    { generateMasterKey, Keyring, parseMasterKey, resealAllSecrets, systemClock },
    masterKeyFiles,
    { openRuntime },
  ] = await Promise.all([import('@baton/core'), import('./config/master-key.js'), import('./runtime.js')]);
  const { loadKeyring, MASTER_KEY_FILE, NEXT_MASTER_KEY_FILE, writeKeyFile } = masterKeyFiles;
  const nextFile = path.join(config.dataDir, NEXT_MASTER_KEY_FILE);
  const fileMode = config.masterKey === undefined;
  const old = loadKeyring({ masterKey: config.masterKey, dataDir: config.dataDir, create: false });
  let next: MasterKey | undefined;
  if (newKeyFromStdin) {
    try {
      next = parseMasterKey(await readStdinLine());
    } catch (err) {
      throw new UsageError(`new key (standard input): ${(err as Error).message}`);
    }
  }
  if (fileMode) {
    // Resume a rotation that stopped half-way, or record the new key before anything is sealed under it.
    if (fs.existsSync(nextFile)) {
      const pending = parseMasterKey(fs.readFileSync(nextFile, 'utf8'));
      // Values may already be sealed under the pending key, and only it becomes master.key: sealing under
      // another key here would leave them under a key that is written nowhere.
      if (next && next.kid !== pending.kid) {
        throw new UsageError(
          `a rotation to master key ${pending.kid} is pending (${nextFile}); run "baton key rotate" without --new-key-stdin to finish it first`,
        );
      }
      next = pending;
    }
    next ??= generateMasterKey();
    if (!fs.existsSync(nextFile)) writeKeyFile(nextFile, next);
  }
  next ??= generateMasterKey();
  const ring = new Keyring(next, old.keys());
  const rt = await openRuntime(config, { createKey: false });
  try {
    const changed = await resealAllSecrets({ transaction: rt.db.transaction, ring, clock: systemClock, actor: 'cli' });
    if (fileMode) fs.renameSync(nextFile, path.join(config.dataDir, MASTER_KEY_FILE));
    console.log(`Re-encrypted ${changed} secret value(s) under master key ${next.kid}.`);
    if (!fileMode) {
      console.log(`Set BATON_MASTER_KEY to the new key before the next start:\n${next.key.toString('base64')}`);
    }
  } finally {
    await rt.db.close();
  }
}

/** `baton prune`: one retention pass now (or its dry run), printed. */
async function prune(config: Config, opts: { dryRun: boolean; days: string | undefined }): Promise<number> {
  let days = config.retentionDays;
  if (opts.days !== undefined) {
    if (!/^[0-9]{1,5}$/.test(opts.days) || Number(opts.days) < 1 || Number(opts.days) > 36_500)
      throw new UsageError('--days: must be a whole number of days from 1 to 36500');
    days = Number(opts.days);
  }
  if (days === undefined) throw new UsageError('prune needs --days N or BATON_RETENTION_DAYS');
  const retentionDays = days;
  return withRuntime(config, async (rt) => {
    const r = await rt.services.retention.prune({ days: retentionDays, dryRun: opts.dryRun, actor: 'cli' });
    const verb = r.dryRun ? 'Would remove' : 'Removed';
    console.log(
      `${verb} the log and events of ${r.runs} run(s) finished before ${r.cutoff}: ${r.events} event(s), ${r.bytes} byte(s).`,
    );
    if (r.cache) console.log(`${verb} ${r.cache.entries} requirements cache entr(ies), ${r.cache.bytes} byte(s).`);
    if (r.dryRun) console.log('Dry run: nothing was changed.');
    return 0;
  });
}

export async function main(argv: string[]): Promise<number> {
  const [cmd, sub] = argv;
  // `baton user create …`, but `baton user --help` asks about the group.
  const grouped = (cmd === 'user' || cmd === 'key') && sub !== undefined && !sub.startsWith('-');
  const topic = grouped ? `${cmd} ${sub}` : (cmd ?? 'main');
  const rest = argv.slice(grouped ? 2 : 1);
  const { values, positionals } = parseArgs({
    args: rest,
    options: {
      help: { type: 'boolean', short: 'h' },
      username: { type: 'string' },
      role: { type: 'string' },
      email: { type: 'string' },
      'password-stdin': { type: 'boolean' },
      'new-key-stdin': { type: 'boolean' },
      'dry-run': { type: 'boolean' },
      days: { type: 'string' },
      'with-key': { type: 'string' },
      'data-dir': { type: 'string' },
      key: { type: 'string' },
      force: { type: 'boolean' },
    },
    strict: true,
    allowPositionals: true,
  });
  if (!cmd || cmd === '--help' || cmd === '-h' || cmd === 'help') {
    console.log(HELP.main);
    return 0;
  }
  if (!HELP[topic]) throw new UsageError(`unknown command "${topic}"\n\n${HELP.main}`);
  if (values.help) {
    console.log(HELP[topic]);
    return 0;
  }
  if (topic === 'user' || topic === 'key') throw new UsageError(`"${topic}" needs a subcommand\n\n${HELP[topic]}`);
  // Only backup and restore take an argument: the file.
  const takesFile = topic === 'backup' || topic === 'restore';
  if (positionals.length !== (takesFile ? 1 : 0))
    throw new UsageError(
      takesFile ? `${topic} needs one file\n\n${HELP[topic]}` : `unexpected argument "${positionals[0]}"`,
    );
  const { loadConfig } = await import('./config/config.js');
  const config = loadConfig();

  switch (topic) {
    case 'serve': {
      const { serve } = await import('./server.js');
      const running = await serve(config);
      await new Promise<void>((resolve) => {
        const onSignal = () => void running.stop().then(resolve);
        process.once('SIGTERM', onSignal);
        process.once('SIGINT', onSignal);
      });
      return 0;
    }
    case 'migrate':
      return withRuntime(config, async (rt) => {
        console.log(`Database (${rt.db.dialect}) is at the latest migration.`);
        return 0;
      });
    case 'user create': {
      const { Role, UserCreateBody, Username } = await import('@baton/contracts');
      const username = check(Username, values.username, '--username');
      const role = check(Role, values.role, '--role');
      if (values.email !== undefined) check(UserCreateBody.shape.email, values.email, '--email');
      const { password, generated } = await passwordFrom(values['password-stdin']);
      // The same rules as POST /v1/users: the CLI is no back door around validation.
      const body = check(
        UserCreateBody,
        { username, role, password, ...(values.email !== undefined ? { email: values.email } : {}) },
        'user',
      );
      return withRuntime(config, async (rt) => {
        const user = await rt.services.users.createAs('cli', body);
        console.log(`Created ${user.username} (${user.id}, role ${user.role}).`);
        if (generated) console.log(`Password, shown this once: ${password}`);
        return 0;
      });
    }
    case 'user set-password': {
      const { Username } = await import('@baton/contracts');
      const username = check(Username, values.username, '--username');
      const { password, generated } = await passwordFrom(values['password-stdin']);
      return withRuntime(config, async (rt) => {
        const user = await rt.db.repos.users.findByUsername(username);
        if (!user) throw new UsageError(`no user named ${username}`);
        await rt.services.users.updateAs('cli', undefined, user.id, { password });
        console.log(`Password of ${username} changed; their sessions have ended.`);
        if (generated) console.log(`Password, shown this once: ${password}`);
        return 0;
      });
    }
    case 'user list':
      return withRuntime(config, async (rt) => {
        let cursor: string | undefined;
        do {
          const page = await rt.services.users.list(
            { id: 'cli', username: 'cli', role: 'admin' },
            { limit: 500, cursor },
          );
          for (const u of page.items) console.log(`${u.id}\t${u.username}\t${u.role}`);
          cursor = page.next;
        } while (cursor);
        return 0;
      });
    case 'key rotate':
      await keyRotate(config, values['new-key-stdin'] === true);
      return 0;
    case 'prune':
      return prune(config, { dryRun: values['dry-run'] === true, days: values.days });
    case 'backup': {
      const { backup } = await import('./system/backup.js');
      const done = await backup(config, positionals[0]!, { withKey: values['with-key'] });
      console.log(`Backed up the database to ${done.file} (${done.bytes} bytes).`);
      if (done.keyFile)
        console.log(`Wrote the master key to ${done.keyFile} (mode 0600): keep it apart from the backup.`);
      return 0;
    }
    case 'restore': {
      const { restore } = await import('./system/backup.js');
      const done = await restore(config, positionals[0]!, {
        dataDir: values['data-dir'],
        key: values.key,
        force: values.force === true,
      });
      console.log(`Restored ${positionals[0]} as ${done.database}${values.key ? ' with its master key' : ''}.`);
      return 0;
    }
    default:
      throw new UsageError(`"${topic}" is handled by bin/baton`);
  }
}

/** The exit code and message for a failed command: usage and configuration errors 2, the domain's refusals 1. */
async function failure(err: unknown): Promise<{ code: number; message: string }> {
  // Every parseArgs complaint (unknown option, missing value, stray argument) is a usage error.
  const code = (err as { code?: unknown } | null)?.code;
  if (err instanceof UsageError || (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')))
    return { code: 2, message: (err as Error).message };
  // Loaded already when one of their errors can have been thrown; a module that failed to load is a crash below.
  const errorTypes = await Promise.all([
    import('@baton/core'),
    import('./config/config.js'),
    import('./system/backup.js'),
  ]).catch(() => undefined);
  if (errorTypes) {
    const [{ BatonError, ValidationError }, { ConfigError }, { BackupRefused }] = errorTypes;
    if (err instanceof ConfigError || err instanceof ValidationError) return { code: 2, message: err.message };
    if (err instanceof BackupRefused) return { code: 1, message: err.message };
    // A refusal from the domain (a user that already exists…) is a message, not a stack trace.
    if (err instanceof BatonError) return { code: 1, message: err.message };
  }
  return { code: 1, message: (err as Error)?.stack ?? String(err) };
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  async (err: unknown) => {
    const { code, message } = await failure(err);
    console.error(`baton: ${message}`);
    process.exit(code);
  },
);
