#!/usr/bin/env bash
# The whole test suite, from a fresh clone on a fresh machine: system packages and services, install, build,
# type checks, lint, import rules, then every test (SQLite and PostgreSQL, real processes, real browser).
# Ends with one line "N passed, N failed" (the four checks count as one test each).
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/ensure-system.sh || { echo "0 passed, 1 failed"; exit 1; }
echo "== install"; pnpm install --frozen-lockfile || { echo "0 passed, 1 failed"; exit 1; }
# The build and the four checks at once: each is one mostly single-threaded process, so on two cores this takes
# about half the time of running them one after another (the tests need the build, not the checks). The build
# emits without checking types (tsc --noCheck: the same JavaScript, 27 s of CPU instead of 51): typecheck does that.
checks_dir=$(mktemp -d)
for check in typecheck lint format cycles; do
  ( pnpm -s "$check" > "$checks_dir/$check.log" 2>&1; echo $? > "$checks_dir/$check.rc" ) &
done
echo "== build"; pnpm build || { wait; echo "0 passed, 1 failed"; exit 1; }
wait

checks_passed=0; checks_failed=0
for check in typecheck lint format cycles; do
  echo "== $check"
  cat "$checks_dir/$check.log"
  if [ "$(cat "$checks_dir/$check.rc")" = 0 ]; then checks_passed=$((checks_passed + 1)); else checks_failed=$((checks_failed + 1)); echo "!! $check failed"; fi
done
rm -rf "$checks_dir"

# Databases left by an earlier run that was killed before its clean-up (each test file makes its own, named
# baton_t_<unix time>_<random>). Only those older than an hour: a run going on beside this one keeps its own.
cutoff=$(( $(date +%s) - 3600 ))
psql -h 127.0.0.1 -U postgres -d test -Atc "select datname from pg_database where datname like 'baton\_t\_%'" 2>/dev/null |
  while read -r stale; do
    created=$(echo "$stale" | sed -n 's/^baton_t_\([0-9]\{10\}\)_.*/\1/p')
    # Names without a time come from older versions of the helper: always leftovers.
    if [ -z "$created" ] || [ "$created" -lt "$cutoff" ]; then
      psql -h 127.0.0.1 -U postgres -d test -qc "drop database if exists \"$stale\" with (force)" >/dev/null 2>&1
    fi
  done

echo "== tests"
results=$(mktemp)
NODE_OPTIONS=--experimental-vm-modules pnpm exec jest --ci --json --outputFile="$results" "$@"
jest_rc=$?

node -e '
  const fs = require("fs");
  let r = { numPassedTests: 0, numFailedTests: 0, numTotalTests: 0 };
  try { r = JSON.parse(fs.readFileSync(process.argv[1], "utf8")); } catch {}
  const passed = r.numPassedTests + Number(process.argv[2]);
  // A suite that failed to load has no failed tests but must still count as a failure.
  const broken = (r.testResults || []).filter((t) => t.status === "failed" && t.assertionResults.every((a) => a.status !== "failed")).length;
  const failed = r.numFailedTests + broken + Number(process.argv[3]) + (r.numTotalTests === 0 ? 1 : 0);
  console.log(`${passed} passed, ${failed} failed`);
' "$results" "$checks_passed" "$checks_failed"
rm -f "$results"
[ "$jest_rc" -eq 0 ] && [ "$checks_failed" -eq 0 ]
