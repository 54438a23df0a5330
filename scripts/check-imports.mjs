#!/usr/bin/env node
// Enforces ARCHITECTURE.md's import rules and fails on circular imports (file level, value imports).
// Dependency-free on purpose: it reads import statements with a small scanner instead of a bundler.
import fs from 'node:fs';
import path from 'node:path';

// The tree to check: this repository, or another given as the first argument (the checker's own test uses fixtures).
const root = process.argv[2]
  ? path.resolve(process.argv[2])
  : path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const SCAN = [
  'apps/api/src',
  'apps/worker/src',
  'apps/web/src',
  'packages/contracts/src',
  'packages/core/src',
  'packages/db/src',
  'packages/queue/src',
  'packages/executor/src',
  'test',
  'bench',
];

/**
 * What each unit may import.
 * - `allow`: the @baton/* packages it may import (values or types).
 * - `valueImportsFrom`: for those packages, the only names it may import as values (everything else type-only).
 * - `modules`: for packages, the only outside modules their shipped code may import (`node:*` = Node's own);
 *   anything not listed (pg, ioredis, express…) fails, so a layer cannot quietly grow a dependency. Test files
 *   and test support may import anything their package's tests need.
 */
const RULES = {
  'packages/contracts': { allow: [], modules: ['zod'] },
  'packages/db': { allow: ['contracts'], modules: ['node:*', 'kysely', 'pg', 'better-sqlite3'] },
  // core gets repositories and seams as factory arguments: from db it takes types, plus the error repositories
  // throw and these pure helpers only; from the outside world only Node itself and two pure parsers (cron
  // expressions; YAML, which AWX and Semaphore exports hold their variables in).
  'packages/core': {
    allow: ['contracts', 'db'],
    valueImportsFrom: { db: ['DuplicateKeyError', 'GENESIS_HASH', 'toNumber'] },
    modules: ['node:*', 'cron-parser', 'yaml'],
  },
  'packages/queue': { allow: ['contracts'], modules: ['node:*', 'ioredis', 'bullmq'] },
  'packages/executor': { allow: ['contracts'], modules: ['node:*'] },
  'apps/worker': { allow: ['contracts', 'queue', 'executor'] },
  'apps/api': { allow: ['contracts', 'core', 'db', 'queue', 'executor'] },
  'apps/web': { allow: ['contracts'] },
  test: { allow: ['contracts', 'core', 'db', 'queue', 'executor'] },
  bench: { allow: ['contracts', 'core', 'db', 'queue', 'executor'] },
};

const moduleAllowed = (allowed, bare) =>
  allowed.includes(bare) || (bare.startsWith('node:') && allowed.includes('node:*'));

function walk(dir, out = []) {
  if (!fs.existsSync(dir)) return out;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name === 'dist') continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (/\.(ts|tsx|mts)$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

// Tests and test support may build real repositories (a test database) to hand to the code under test.
const isTestFile = (file) => /\.test\.tsx?$/.test(file) || file.split(path.sep).includes('testing');

const unitOf = (file) => {
  const rel = path.relative(root, file);
  const [a, b] = rel.split(path.sep);
  return a === 'apps' || a === 'packages' ? `${a}/${b}` : a;
};

// import x from '…' | import type … from '…' | export … from '…' | import '…' | import('…')
const STATIC = /(^|[\n;])\s*(import|export)\s+(type\s+)?([^'";]*?\s+from\s+)?['"]([^'"]+)['"]/g;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

function importsOf(file) {
  const src = fs
    .readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  const found = [];
  for (const m of src.matchAll(STATIC)) {
    const clause = m[4] ?? '';
    // `import { type A, type B } from` is type-only too.
    const braces = /^\s*\{([^}]*)\}\s+from\s+$/.exec(clause);
    const names = braces
      ? braces[1]
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : [];
    const valueNames = m[3]
      ? []
      : braces
        ? names.filter((s) => !s.startsWith('type ')).map((s) => s.split(/\s+as\s+/)[0])
        : ['*'];
    found.push({ spec: m[5], typeOnly: valueNames.length === 0, valueNames });
  }
  for (const m of src.matchAll(DYNAMIC)) found.push({ spec: m[1], typeOnly: false, valueNames: ['*'] });
  return found;
}

function resolveRelative(from, spec) {
  const base = path.resolve(path.dirname(from), spec);
  const candidates = [
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.js$/, '.tsx'),
    base,
    `${base}.ts`,
    `${base}.tsx`,
    path.join(base, 'index.ts'),
  ];
  return candidates.find((c) => fs.existsSync(c) && fs.statSync(c).isFile());
}

const files = SCAN.flatMap((d) => walk(path.join(root, d)));
const problems = [];
const graph = new Map();

for (const file of files) {
  const unit = unitOf(file);
  const rule = RULES[unit];
  const edges = [];
  for (const { spec, typeOnly, valueNames } of importsOf(file)) {
    const where = path.relative(root, file);
    if (spec.startsWith('.')) {
      const target = resolveRelative(file, spec);
      if (!target) continue;
      // End-to-end tests and benchmarks may compose an app from its sources; nothing else crosses units.
      if (unitOf(target) !== unit && !['test', 'bench'].includes(unit))
        problems.push(`${where}: relative import "${spec}" reaches into ${unitOf(target)}; import its package instead`);
      if (!typeOnly) edges.push(target);
      continue;
    }
    const internal = /^@baton\/([\w-]+)/.exec(spec);
    if (internal) {
      const pkg = internal[1];
      if (['api', 'worker', 'web'].includes(pkg)) {
        problems.push(`${where}: imports app @baton/${pkg}; apps never import each other`);
      } else if (rule && !rule.allow.includes(pkg)) {
        problems.push(`${where}: ${unit} may not import @baton/${pkg}`);
      } else if (rule?.valueImportsFrom?.[pkg] && !isTestFile(file)) {
        const extra = valueNames.filter((n) => !rule.valueImportsFrom[pkg].includes(n));
        if (extra.length)
          problems.push(
            `${where}: ${unit} may import only types from @baton/${pkg} (it receives implementations as factory arguments), not ${extra.join(', ')}`,
          );
      }
      const entry = path.join(
        root,
        'packages',
        pkg,
        'src',
        // a subpath (@baton/db/testing, @baton/queue/redis) is the index of that folder
        spec.split('/')[2] ? `${spec.split('/')[2]}/index.ts` : 'index.ts',
      );
      if (!typeOnly && fs.existsSync(entry)) edges.push(entry);
      continue;
    }
    const bare = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
    if (rule?.modules && !isTestFile(file) && !moduleAllowed(rule.modules, bare)) {
      problems.push(
        `${where}: ${unit} may not import ${bare} (allowed outside modules: ${rule.modules.join(', ')}; see scripts/check-imports.mjs)`,
      );
    }
  }
  graph.set(file, edges);
}

// Cycles: iterative DFS with colours over value imports.
const state = new Map();
const cycles = [];
for (const start of graph.keys()) {
  if (state.get(start)) continue;
  const stack = [[start, 0]];
  const pathStack = [start];
  state.set(start, 1);
  while (stack.length) {
    const top = stack[stack.length - 1];
    const [node, i] = top;
    const edges = graph.get(node) ?? [];
    if (i >= edges.length) {
      state.set(node, 2);
      stack.pop();
      pathStack.pop();
      continue;
    }
    top[1]++;
    const next = edges[i];
    const s = state.get(next) ?? 0;
    if (s === 1) {
      const cyc = pathStack
        .slice(pathStack.indexOf(next))
        .concat(next)
        .map((f) => path.relative(root, f));
      cycles.push(cyc.join(' → '));
    } else if (s === 0 && graph.has(next)) {
      state.set(next, 1);
      stack.push([next, 0]);
      pathStack.push(next);
    }
  }
}

for (const c of cycles) problems.push(`import cycle: ${c}`);
if (problems.length) {
  console.error(problems.join('\n'));
  console.error(`\n${problems.length} import problem(s) in ${files.length} files`);
  process.exit(1);
}
console.log(`imports ok: ${files.length} files, no cycles, layer rules respected`);
