// The one dispatch decision: which bundle failures end a run, with which reason, and which are left to the sweep.
import { describe, expect, it } from '@jest/globals';
import { type Database, openDatabase } from '@baton/db';
import { createTestDatabase, DIALECTS } from '@baton/db/testing';
import {
  BatonError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  RunInputMissingError,
  UnavailableError,
  UnprocessableError,
  ValidationError,
} from '../common/errors.js';
import { createRunBundleBuilder } from './run-bundle.js';
import { type BundleFailureVerdict, classifyBundleFailure } from './run-dispatch.js';

class SomeBatonError extends BatonError {}

describe('classifyBundleFailure', () => {
  it.each<[string, unknown, BundleFailureVerdict]>([
    [
      'a referenced object gone (RunInputMissingError)',
      new RunInputMissingError('inventory inv_1 of run run_1 no longer exists'),
      { finish: 'missing_input' },
    ],
    [
      'a stored run our rules refuse (ConflictError)',
      new ConflictError('credential cred_1 is a token credential, which a run cannot use'),
      { finish: 'executor_error' },
    ],
    ['the run itself gone (NotFoundError)', new NotFoundError('run run_1 not found'), { finish: 'executor_error' }],
    ['a ValidationError', new ValidationError('bad'), { finish: 'executor_error' }],
    ['an UnprocessableError', new UnprocessableError('no'), { finish: 'executor_error' }],
    ['a ForbiddenError', new ForbiddenError('no'), { finish: 'executor_error' }],
    ['any other named error of ours', new SomeBatonError('no'), { finish: 'executor_error' }],
    ['a dependency away (UnavailableError)', new UnavailableError('the database did not answer'), { retryLater: true }],
    [
      'a driver error (connection refused)',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      { retryLater: true },
    ],
    ['an error we do not know', new TypeError('x is undefined'), { retryLater: true }],
    ['a thrown non-error', 'boom', { retryLater: true }],
    ['nothing at all', undefined, { retryLater: true }],
  ])('%s → %j', (_what, err, verdict) => {
    expect(classifyBundleFailure(err)).toEqual(verdict);
  });
});

/** A database that cannot answer: PostgreSQL's server unreachable; SQLite's connection closed (as at shutdown). */
async function deadDatabase(dialect: (typeof DIALECTS)[number]): Promise<Database> {
  if (dialect === 'postgres') return openDatabase('postgres://postgres@127.0.0.1:1/test');
  const tdb = await createTestDatabase('sqlite');
  await tdb.drop();
  return tdb.db;
}

describe.each(DIALECTS)('a bundle built while the database is away, on %s', (dialect) => {
  it('is left to the sweep, never finished', async () => {
    const db = await deadDatabase(dialect);
    const bundles = createRunBundleBuilder({
      runs: db.repos.runs,
      projects: db.repos.projects,
      inventories: db.repos.inventories,
      knownHosts: db.repos.knownHosts,
      credentials: { reveal: async () => Promise.reject(new Error('not reached')) },
    });
    const err = await bundles.build('run_01ARZ3NDEKTSV4RRFFQ69G5FAV').catch((e: unknown) => e);
    // The driver's own error (from another realm: not an instance of this test's Error).
    expect(String((err as Error | undefined)?.message)).toMatch(dialect === 'postgres' ? /ECONNREFUSED/ : /destroyed/);
    expect(classifyBundleFailure(err)).toEqual({ retryLater: true });
    if (dialect === 'postgres') await db.close();
  });
});
