/** One Jest run over every package's tests (beside the code) and the cross-process tests in test/. */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  roots: ['<rootDir>/apps', '<rootDir>/packages', '<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  moduleNameMapper: {
    '^@baton/db/testing$': '<rootDir>/packages/db/src/testing/index.ts',
    '^@baton/executor/testing$': '<rootDir>/packages/executor/src/testing/index.ts',
    '^@baton/queue/redis$': '<rootDir>/packages/queue/src/redis/index.ts',
    '^@baton/queue/testing$': '<rootDir>/packages/queue/src/testing/index.ts',
    '^@baton/(contracts|core|db|queue|executor)$': '<rootDir>/packages/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  transform: {
    // Transpile only (Oxc): `pnpm typecheck` (tsc) is the type check.
    '^.+\\.tsx?$': '<rootDir>/test/support/oxc-transform.mjs',
  },
  // A safety net, not a speed check: tests that wait on real runs have safety nets of their own of up to 180 s, and a
  // loaded 2-core machine in CI has taken over 60 s for a single real run.
  testTimeout: 180_000,
  // Three on two cores: a worker waiting on a child process (ansible, a browser, a server) leaves the CPU to the others.
  maxWorkers: 3,
  // Known long files first when Jest has no timings of its own (CI): the run does not end on one of them alone.
  testSequencer: '<rootDir>/test/support/slow-first-sequencer.mjs',
};
