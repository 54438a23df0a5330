// Bundles the compiled apps (apps/*/dist, after `tsc -b`) into a few files each, which bin/baton runs.
//
// Node 20 has no compile cache, and loading ~1,400 separate modules (Kysely alone is 263 files, BullMQ 177) cost a
// `baton migrate` 2.6 s of CPU, nearly all of it resolving, reading and compiling modules; bundled it takes about
// 1 s. Every `baton` process pays this at start: serve, its executor process, workers and each CLI command.
//
// The output goes to apps/<app>/dist/bundle/, at the same depth as the modules it replaces (apps/api/dist/system/…),
// so paths a module takes from its own location (the UI at ../../../web/dist) stay right. Native addons and what is
// only resolved at run time stay outside, loaded from node_modules as before.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';
import { compileCallbackPlugin } from './callback-bytecode.mjs';

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

await compileCallbackPlugin();
