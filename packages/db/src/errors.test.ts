// Which driver failures are an outage (503 over HTTP) rather than a bug: the real drivers' errors are met in
// test/faults (PostgreSQL stopped, SQLite's disk full); here the shapes they take, cause chains included.
import { describe, expect, it } from '@jest/globals';
import { databaseOutage } from './errors.js';

const withCode = (message: string, code?: string) => Object.assign(new Error(message), code ? { code } : {});

describe('databaseOutage', () => {
  it.each([
    ['SQLite disk full', withCode('database or disk is full', 'SQLITE_FULL'), 'storage_full'],
    ['PostgreSQL disk_full', withCode('could not extend file', '53100'), 'storage_full'],
    ['connection refused', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'), 'unavailable'],
    ['admin shutdown', withCode('terminating connection due to administrator command', '57P01'), 'unavailable'],
    ['starting up', withCode('the database system is starting up', '57P03'), 'unavailable'],
    ['connection exception', withCode('connection failure', '08006'), 'unavailable'],
    ['too many connections', withCode('sorry, too many clients already', '53300'), 'unavailable'],
    ['pg lost connection', withCode('Connection terminated unexpectedly'), 'unavailable'],
    ['SQLite busy', withCode('database is locked', 'SQLITE_BUSY'), 'unavailable'],
    ['SQLite I/O error', withCode('disk I/O error', 'SQLITE_IOERR_WRITE'), 'unavailable'],
    ['wrapped', new Error('persisting failed', { cause: withCode('x', 'ECONNRESET') }), 'unavailable'],
  ])('%s is an outage', (_name, err, outage) => {
    expect(databaseOutage(err)).toBe(outage);
  });

  it.each([
    ['a unique violation', withCode('duplicate key', '23505')],
    ['a syntax error', withCode('syntax error', '42601')],
    ['a SQLite constraint', withCode('UNIQUE constraint failed', 'SQLITE_CONSTRAINT_UNIQUE')],
    ['a plain bug', new TypeError('x is undefined')],
    ['not an error', 'text'],
    ['nothing', undefined],
  ])('%s is not', (_name, err) => {
    expect(databaseOutage(err)).toBeUndefined();
  });
});
