import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import {
  DEFAULT_PG_SOCKET_DIR,
  ENV_FILE_DIR,
  type HiddenPathsHost,
  postgresSocketDir,
  sandboxHiddenPaths,
} from './sandbox-paths.js';

const DATA = '/var/lib/baton';

/** A host where exactly `existing` exist. */
const hostWith = (existing: string[], over: Partial<HiddenPathsHost> = {}): HiddenPathsHost => ({
  exists: (p) => existing.includes(p),
  uid: 1001,
  env: {},
  ...over,
});

describe('postgresSocketDir', () => {
  it.each([
    ['postgres://baton@/baton?host=/run/pg', '/run/pg'],
    ['postgresql://baton:pw@/baton?sslmode=disable&host=%2Ftmp%2Fpg', '/tmp/pg'],
    ['postgres://%2Fvar%2Frun%2Fpostgresql/baton', '/var/run/postgresql'],
    ['postgresql:///baton', DEFAULT_PG_SOCKET_DIR],
    ['postgres://baton@/baton', DEFAULT_PG_SOCKET_DIR],
    ['postgres://db.internal:5432/baton', undefined],
    ['postgres://baton:secret@localhost/baton', undefined],
    ['postgres://[::1]:5432/baton', undefined],
    ['postgres://db.internal/baton?host=db2.internal', undefined],
  ])('reads %s as %p', (url, expected) => {
    expect(postgresSocketDir(url)).toBe(expected);
  });

  it('takes PGHOST when the URL names no host', () => {
    expect(postgresSocketDir('postgres:///baton', { PGHOST: '/srv/pg' })).toBe('/srv/pg');
    expect(postgresSocketDir('postgres:///baton', { PGHOST: 'db.internal' })).toBeUndefined();
    expect(postgresSocketDir('postgres://db.internal/baton', { PGHOST: '/srv/pg' })).toBeUndefined();
  });
});

describe('sandboxHiddenPaths', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('hides the data dir and a SQLite database kept elsewhere, existing or not', () => {
    expect(sandboxHiddenPaths({ dataDir: DATA, databaseUrl: 'sqlite:/srv/db/baton.db' }, hostWith([]))).toEqual([
      DATA,
      '/srv/db',
    ]);
    expect(sandboxHiddenPaths({ dataDir: DATA, databaseUrl: `sqlite:${DATA}/baton.db` }, hostWith([]))).toEqual([DATA]);
    expect(sandboxHiddenPaths({ dataDir: DATA, databaseUrl: 'sqlite::memory:' }, hostWith([]))).toEqual([DATA]);
  });

  it('hides the audit signing key, the env file dir, the PostgreSQL socket dir and the runtime dir when they exist', () => {
    const existing = ['/etc/baton-keys/audit.pem', ENV_FILE_DIR, '/run/pg', '/run/user/1001'];
    const config = {
      dataDir: DATA,
      databaseUrl: 'postgres://baton@/baton?host=/run/pg',
      auditSigningKeyFile: '/etc/baton-keys/audit.pem',
    };
    expect(sandboxHiddenPaths(config, hostWith(existing))).toEqual([DATA, ...existing]);
    expect(sandboxHiddenPaths(config, hostWith([]))).toEqual([DATA]);
    expect(
      sandboxHiddenPaths({ ...config, databaseUrl: 'postgresql:///baton' }, hostWith([DEFAULT_PG_SOCKET_DIR])),
    ).toEqual([DATA, DEFAULT_PG_SOCKET_DIR]);
  });

  it('hides no socket dir for a TCP connection, and no runtime dir without a uid', () => {
    const config = { dataDir: DATA, databaseUrl: 'postgres://db.internal/baton' };
    expect(sandboxHiddenPaths(config, hostWith([DEFAULT_PG_SOCKET_DIR, '/run/user/1001'], { uid: undefined }))).toEqual(
      [DATA],
    );
  });

  it('resolves a relative signing key path, and checks what exists on this host by default', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-hidden-'));
    dirs.push(dir);
    const key = path.join(dir, 'audit.pem');
    fs.writeFileSync(key, 'key');
    const relative = path.relative(process.cwd(), key);
    expect(
      sandboxHiddenPaths({ dataDir: DATA, databaseUrl: 'postgres://db.internal/baton', auditSigningKeyFile: relative }),
    ).toContain(key);
    expect(
      sandboxHiddenPaths({
        dataDir: DATA,
        databaseUrl: 'postgres://db.internal/baton',
        auditSigningKeyFile: path.join(dir, 'missing.pem'),
      }),
    ).not.toContain(path.join(dir, 'missing.pem'));
  });
});
