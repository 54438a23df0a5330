// Bundles the compiled apps (apps/*/dist, after `tsc -b`) into a few files each, which bin/baton runs.
//
// Node 20 has no compile cache, and loading ~1,400 separate modules (Kysely alone is 263 files, BullMQ 177) cost a
// `baton migrate` 2.6 s of CPU, nearly all of it resolving, reading and compiling modules; bundled it takes about
// 1 s. Every `baton` process pays this at start: serve, its executor process, workers and each CLI command.
//
// The output goes to apps/<app>/dist/bundle/, at the same depth as the modules it replaces (apps/api/dist/system/…),
// so paths a module takes from its own location (the UI at ../../../web/dist) stay right. Native addons and what is
// only resolved at run time stay outside, loaded from node_modules as before.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const EXTERNAL = [
  // native addons (loaded through `bindings` / node-gyp-build from their package directory)
  /^better-sqlite3$/,
  /^pg-native$/,
  /^msgpackr-extract$/,
  // served as files from its package directory
  /^swagger-ui-dist(\/|$)/,
];

const APPS = [
  {
    dir: 'apps/api',
    // The executor process is forked from its own module's file: an entry of its own, so that file exists.
    input: { cli: 'dist/cli.js', 'executor-process': 'dist/runs/executor-process.js' },
  },
  { dir: 'apps/worker', input: { main: 'dist/main.js' } },
];

for (const app of APPS) {
  const cwd = path.join(root, app.dir);
  const bundle = await rolldown({
    cwd,
    input: Object.fromEntries(Object.entries(app.input).map(([name, file]) => [name, path.join(cwd, file)])),
    platform: 'node',
    external: EXTERNAL,
    logLevel: 'warn',
    onLog(level, log, defaultHandler) {
      // Circular imports inside dependencies (winston, zod…) and eval in them are theirs, not ours.
      if (log.code === 'CIRCULAR_DEPENDENCY' || log.code === 'EVAL') return;
      defaultHandler(level, log);
    },
  });
  await bundle.write({ dir: path.join(cwd, 'dist', 'bundle'), format: 'esm', cleanDir: true });
  await bundle.close();
}

// The callback plugin's bytecode beside it: ansible imports the plugin on every run, inside a sandbox whose read-only
// root keeps Python from caching what it compiled, so each run would compile it again (~2 ms, bench/overhead).
// Checked by the source's hash, not its time, so a copy that does not keep file times leaves it valid. Compiled by
// the interpreter ansible-playbook runs on (its #! line), else python3; a failure only warns.
const pluginDir = path.join(root, 'packages', 'executor', 'callback');
const python = ansiblePython() ?? 'python3';
const compiled = spawnSync(python, ['-m', 'compileall', '-q', '-l', '--invalidation-mode', 'checked-hash', pluginDir], {
  stdio: ['ignore', 'ignore', 'pipe'],
  encoding: 'utf8',
});
if (compiled.status !== 0) {
  console.warn(
    `bundle: the callback plugin was not precompiled with ${python}: ${compiled.error?.message ?? compiled.stderr}`,
  );
}

/** The interpreter named by ansible-playbook's #! line (directly or through env), if there is one. */
function ansiblePython() {
  try {
    const found = spawnSync('sh', ['-c', 'command -v ansible-playbook'], { encoding: 'utf8' }).stdout?.trim();
    if (!found) return undefined;
    const words = /^#!(.*)/.exec(readFileSync(found, 'utf8').split('\n', 1)[0])?.[1]?.trim().split(/\s+/) ?? [];
    // `#!/usr/bin/env [-S] [NAME=value…] python3 …`: the first word that is neither an option nor an assignment
    const program =
      path.basename(words[0] ?? '') === 'env'
        ? words.slice(1).find((w) => !w.startsWith('-') && !w.includes('='))
        : words[0];
    return program && path.basename(program).startsWith('python') ? program : undefined;
  } catch {
    return undefined;
  }
}
