import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { acquireServeLock, LOCK_STALE_AFTER_MS, type LockSelf, serveLockFile } from './serve-lock.js';
import { processAlive } from './process-alive.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function lockFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-lock-'));
  dirs.push(dir);
  return path.join(dir, 'data', 'baton.db.serve.lock');
}

/** A process on `hostname` with `pid`, where the pids in `alive` live. */
const proc = (hostname: string, pid: number, alive: number[] = [], now = Date.now): LockSelf => ({
  hostname,
  pid,
  processAlive: (p) => alive.includes(p),
  now,
});

/** A ConfigError's message (errors cross Jest realms: checked by name, not class). */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect((err as Error).constructor.name).toBe('ConfigError');
    return (err as Error).message;
  }
  throw new Error('expected a refusal');
}

const age = (file: string, ms: number) => {
  const then = new Date(Date.now() - ms);
  fs.utimesSync(file, then, then);
};

describe('serveLockFile', () => {
  it('lies beside a SQLite database file, and there is none for PostgreSQL or an in-memory database', () => {
    expect(serveLockFile('sqlite:/var/lib/baton/baton.db')).toBe('/var/lib/baton/baton.db.serve.lock');
    expect(serveLockFile('sqlite://rel/b.db')).toBe(path.resolve('rel/b.db.serve.lock'));
    expect(serveLockFile('postgres://db.internal/baton')).toBeUndefined();
    expect(serveLockFile('sqlite::memory:')).toBeUndefined();
  });
});

describe('the serve lock', () => {
  it('is taken once: a second live server on this host is refused with its pid, until the first releases it', () => {
    const file = lockFile();
    const first = acquireServeLock(file, proc('box-a', 100, [100, 200]));
    const holder = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(holder).toMatchObject({ pid: 100, host: 'box-a' });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);

    const message = refusal(() => acquireServeLock(file, proc('box-a', 200, [100, 200])));
    expect(message).toContain('pid 100 on host box-a');
    expect(message).toContain('box-a/embedded/100');
    expect(message).toContain(file);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual(holder);

    first.release();
    expect(fs.existsSync(file)).toBe(false);
    first.release();
    const second = acquireServeLock(file, proc('box-a', 200, [100, 200]));
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ pid: 200 });
    second.release();
    // Nothing is left beside it: neither the file written aside nor a moved stale lock.
    expect(fs.readdirSync(path.dirname(file))).toEqual([]);
  });

  it('is taken over from a process that died (a crash leaves it behind), checked with the real kill(pid, 0)', () => {
    const file = lockFile();
    const child = spawnSync(process.execPath, ['-e', '']);
    const deadPid = child.pid!;
    expect(processAlive(deadPid)).toBe(false);
    expect(processAlive(process.pid)).toBe(true);
    const self = { hostname: os.hostname(), processAlive, now: Date.now };

    acquireServeLock(file, { ...self, pid: deadPid }); // never released: a crash
    const taken = acquireServeLock(file, { ...self, pid: process.pid });
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ pid: process.pid });
    // While this process lives, another one is refused.
    expect(refusal(() => acquireServeLock(file, { ...self, pid: deadPid }))).toContain(`pid ${process.pid}`);
    taken.release();
  });

  it('is taken over when it names this very pid: an earlier process with the same pid left it', () => {
    const file = lockFile();
    acquireServeLock(file, proc('box-a', 1, [1]));
    const again = acquireServeLock(file, proc('box-a', 1, [1]));
    expect(fs.existsSync(file)).toBe(true);
    again.release();
    expect(fs.existsSync(file)).toBe(false);
  });

  it('of another host holds while it is refreshed, and is stale after a minute untouched', () => {
    const file = lockFile();
    acquireServeLock(file, proc('box-b', 1, [1]));
    expect(refusal(() => acquireServeLock(file, proc('box-a', 1, [1])))).toContain('pid 1 on host box-b');
    age(file, LOCK_STALE_AFTER_MS - 5_000);
    refusal(() => acquireServeLock(file, proc('box-a', 1, [1])));
    age(file, LOCK_STALE_AFTER_MS + 5_000);
    const taken = acquireServeLock(file, proc('box-a', 1, [1]));
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ host: 'box-a' });
    taken.release();
  });

  it('with unreadable content holds while fresh (a server is writing it) and is stale when old', () => {
    const file = lockFile();
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, '{"pid": ');
    expect(refusal(() => acquireServeLock(file, proc('box-a', 5)))).toContain(
      'another process is taking the lock file',
    );
    age(file, LOCK_STALE_AFTER_MS + 1_000);
    acquireServeLock(file, proc('box-a', 5)).release();
    expect(fs.existsSync(file)).toBe(false);
  });

  it('is released only while it is still ours', () => {
    const file = lockFile();
    const ours = acquireServeLock(file, proc('box-a', 7));
    // Taken over as stale by a server that judged us dead: our release leaves theirs alone.
    fs.rmSync(file);
    const theirs = acquireServeLock(file, proc('box-a', 8));
    ours.release();
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ pid: 8 });
    theirs.release();
  });

  it('names the file when it cannot be created', () => {
    const file = lockFile();
    // Its directory is a file: nothing can be created in it, not even by root.
    fs.writeFileSync(path.dirname(file), 'not a directory');
    expect(refusal(() => acquireServeLock(file, proc('box-a', 9)))).toContain(`cannot create the lock file ${file}`);
  });
});
