// Jest's own order, except that test files it has no timing for start with the known long ones.
//
// Without a timing cache (CI runs in a fresh clone) Jest orders files by size, and some of the longest are small
// files that spawn many processes: started late, they leave one worker running alone at the end of the run.
// With a timing cache (a second local run) Jest orders by measured time, which this leaves as it is.
import { createRequire } from 'node:module';
import path from 'node:path';

// @jest/test-sequencer is a dependency of Jest's, not of this repository: resolved from where Jest resolves it.
const fromJest = createRequire(createRequire(import.meta.url).resolve('jest'));
const fromJestCore = createRequire(fromJest.resolve('@jest/core'));
const DefaultSequencer = fromJestCore('@jest/test-sequencer').default;

/** Longest first, by their wall time in a whole run on the 2-core CI machine (paths from the repository root). */
const KNOWN_LONG = [
  /^test\/cli\.test\.ts$/,
  /^test\/queue-mode\.e2e\.test\.ts$/,
  // Ten real runs, thirty seconds of them sleeps: ~110 s whatever the machine's load.
  /^apps\/api\/src\/observation\/observation\.routes\.test\.ts$/,
  // The browser tests: each starts Chromium and `baton serve`.
  /^test\/ui[./]/,
  /^test\/runs-restart\.e2e\.test\.ts$/,
  // Each fault test starts `baton serve` (and its own PostgreSQL) and waits out a crash, an outage or a full disk.
  /^test\/faults\//,
  /^apps\/api\/src\/http\/bad-input-sweep\.test\.ts$/,
  /^packages\/executor\/src\/playbook\/run-playbook[.\w-]*\.test\.ts$/,
  /^apps\/api\/src\/pipelines\/pipeline\.routes\.test\.ts$/,
  /^test\/runs\.e2e\.test\.ts$/,
  /^apps\/api\/src\/runs\/run\.routes\.test\.ts$/,
];

export default class SlowFirstSequencer extends DefaultSequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    const untimed = (test) => typeof test.duration !== 'number' && !this.hasFailed(test);
    const rank = (test) => {
      const relative = path.relative(test.context.config.rootDir, test.path).split(path.sep).join('/');
      const i = KNOWN_LONG.findIndex((pattern) => pattern.test(relative));
      return i === -1 ? KNOWN_LONG.length : i;
    };
    // A stable sort: among the untimed files the known long ones move ahead, the rest keep Jest's order (by size).
    const reordered = sorted.filter(untimed).sort((a, b) => rank(a) - rank(b));
    let next = 0;
    return sorted.map((test) => (untimed(test) ? reordered[next++] : test));
  }
}
