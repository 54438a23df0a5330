// Jest's TypeScript transform: Oxc (rolldown's transformSync, already here for scripts/bundle.mjs) strips the types.
//
// Transpile only, as ts-jest was configured before it (`pnpm typecheck` is the type check). Measured on the 2-core CI
// machine: the 608 source and test files take ts-jest's TypeScript ~7.6 s of CPU and Oxc ~0.25 s, and nine API test
// files run in band cost 36.5 s of CPU with a warm ts-jest cache (40.3 s cold, as in every fresh-clone CI run, where
// three workers may transform the same file at once) and 32.2–33.7 s with Oxc, warm or cold. ts-jest also loaded
// TypeScript in every worker (~0.45 s).
import crypto from 'node:crypto';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import { transformSync } from 'rolldown/experimental';

const require = createRequire(import.meta.url);
// The cache key changes with this file and with rolldown's version: a new transform never reads an old output.
const TRANSFORMER_KEY = crypto
  .createHash('sha256')
  .update(fs.readFileSync(new URL(import.meta.url)))
  .update(require('rolldown/package.json').version)
  .digest('hex');

// What tsconfig.base.json asks of the emitted code: ES2022 as written (no lowering), ES modules, type-only imports
// removed as written (verbatimModuleSyntax).
const OPTIONS = {
  sourceType: 'module',
  target: 'es2022',
  typescript: { onlyRemoveTypeImports: true },
  sourcemap: true,
};

export default {
  getCacheKey(source, filename) {
    return crypto
      .createHash('sha256')
      .update(TRANSFORMER_KEY)
      .update(filename)
      .update('\0')
      .update(source)
      .digest('hex');
  },
  process(source, filename) {
    const result = transformSync(filename, source, {
      ...OPTIONS,
      lang: filename.endsWith('.tsx') ? 'tsx' : 'ts',
    });
    if (result.errors.length > 0)
      throw new Error(`${filename}: ${result.errors.map((e) => e.codeframe ?? e.message).join('\n')}`);
    return { code: result.code, map: result.map ? JSON.stringify(result.map) : null };
  },
};
