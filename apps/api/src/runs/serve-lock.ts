// One `baton serve` per SQLite database (ARCHITECTURE.md, "Processes": a second replica on SQLite is refused).
// A second process would run its own executors, queue and recovery sweep on the same runs. The lock is a file
// beside the database (so two data dirs naming one database file still meet), created atomically, holding who
// took it; it is stale once that process is gone, and a crashed server's lock never blocks the next start.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseDatabaseUrl } from '@baton/db';
import { ConfigError } from '../config/config.js';
import { processAlive } from './process-alive.js';

/** How often the holder touches its lock, so a server on another host (a shared volume) can tell it lives. */
export const LOCK_REFRESH_MS = 10_000;
/** A lock whose holder cannot be asked (another host, unreadable content) is stale after this long untouched. */
export const LOCK_STALE_AFTER_MS = 60_000;

interface LockHolder {
  pid: number;
  host: string;
  started_at: string;
  /** tells our lock from one another process wrote with the same pid */
  nonce: string;
}

/** Who is asking: this process, unless a test says otherwise. */
export interface LockSelf {
  hostname: string;
  pid: number;
  processAlive(pid: number): boolean;
  now(): number;
}

export interface ServeLock {
  readonly file: string;
  /** Removes the lock if it is still ours; idempotent. */
  release(): void;
}

const thisProcess = (): LockSelf => ({ hostname: os.hostname(), pid: process.pid, processAlive, now: Date.now });

/** The lock file of a SQLite database URL (`<database file>.serve.lock`); undefined for PostgreSQL and in-memory SQLite. */
export function serveLockFile(databaseUrl: string): string | undefined {
  const target = parseDatabaseUrl(databaseUrl);
  if (target.dialect !== 'sqlite' || target.location === ':memory:') return undefined;
  return `${path.resolve(target.location)}.serve.lock`;
}

function parseHolder(text: string): LockHolder | undefined {
  try {
    const v = JSON.parse(text) as Partial<LockHolder>;
    if (
      Number.isSafeInteger(v.pid) &&
      typeof v.host === 'string' &&
      typeof v.started_at === 'string' &&
      typeof v.nonce === 'string'
    )
      return v as LockHolder;
  } catch {
    // fall through: unreadable
  }
  return undefined;
}

function readLock(file: string): { text: string; holder: LockHolder | undefined; mtimeMs: number } | undefined {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return { text, holder: parseHolder(text), mtimeMs: fs.statSync(file).mtimeMs };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError(`cannot read the lock file ${file}: ${(err as Error).message}`);
  }
}

/** Whether a found lock still belongs to a living server: on this host its pid decides, elsewhere its freshness. */
function stillHeld(found: { holder: LockHolder | undefined; mtimeMs: number }, self: LockSelf): boolean {
  const { holder } = found;
  if (holder && holder.host === self.hostname) {
    // Our own pid: an earlier process with this pid left it (a container restarts with the same pid).
    return holder.pid !== self.pid && self.processAlive(holder.pid);
  }
  return self.now() - found.mtimeMs <= LOCK_STALE_AFTER_MS;
}

function describeHolder(file: string, found: { holder: LockHolder | undefined }): string {
  const h = found.holder;
  if (!h) return `another process is taking the lock file ${file}`;
  return `pid ${h.pid} on host ${h.host} (executor ${h.host}/embedded/${h.pid}), running since ${h.started_at}, holds the lock file ${file}`;
}

/** Creates `file` with `text` only if it does not exist: written aside, then hard-linked, so no reader ever sees it half-written. */
function createExclusive(file: string, text: string): boolean {
  const tmp = `${file}.${process.pid}.${crypto.randomBytes(6).toString('hex')}.tmp`;
  fs.writeFileSync(tmp, text, { mode: 0o600 });
  try {
    fs.linkSync(tmp, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/**
 * Moves a stale lock out of the way. A rename has one winner; if what it moved is not the lock judged stale (a
 * racing server replaced it meanwhile), that lock is put back.
 */
function removeStale(file: string, staleText: string): void {
  const aside = `${file}.${process.pid}.${crypto.randomBytes(6).toString('hex')}.stale`;
  try {
    fs.renameSync(file, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  try {
    if (fs.readFileSync(aside, 'utf8') !== staleText) fs.linkSync(aside, file);
  } catch {
    // someone created a lock meanwhile: theirs stands
  } finally {
    fs.rmSync(aside, { force: true });
  }
}

/**
 * Takes the serve lock of a SQLite database or throws a ConfigError naming the server that holds it. The lock
 * is touched every LOCK_REFRESH_MS until released.
 */
export function acquireServeLock(file: string, self: LockSelf = thisProcess()): ServeLock {
  const mine: LockHolder = {
    pid: self.pid,
    host: self.hostname,
    started_at: new Date(self.now()).toISOString(),
    nonce: crypto.randomBytes(12).toString('hex'),
  };
  const text = `${JSON.stringify(mine)}\n`;
  for (let attempt = 0; attempt < 5; attempt++) {
    let created: boolean;
    try {
      fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      created = createExclusive(file, text);
    } catch (err) {
      throw new ConfigError(`cannot create the lock file ${file}: ${(err as Error).message}`);
    }
    if (created) return holding(file, mine);
    const found = readLock(file);
    if (!found) continue; // released meanwhile
    if (stillHeld(found, self)) {
      throw new ConfigError(
        `another baton serve uses this SQLite database: ${describeHolder(file, found)}. One server per SQLite database: stop it first, or use PostgreSQL (BATON_DATABASE_URL) for several`,
      );
    }
    removeStale(file, found.text);
  }
  throw new ConfigError(`cannot take the lock file ${file}: other servers keep starting at the same time`);
}

function holding(file: string, mine: LockHolder): ServeLock {
  const refresh = setInterval(() => {
    const now = new Date();
    try {
      fs.utimesSync(file, now, now);
    } catch {
      // gone or not ours any more: release() sorts it out
    }
  }, LOCK_REFRESH_MS);
  refresh.unref();
  let released = false;
  return {
    file,
    release() {
      if (released) return;
      released = true;
      clearInterval(refresh);
      const found = readLockQuietly(file);
      if (found?.holder?.nonce === mine.nonce) fs.rmSync(file, { force: true });
    },
  };
}

function readLockQuietly(file: string): ReturnType<typeof readLock> {
  try {
    return readLock(file);
  } catch {
    return undefined;
  }
}
