// Module hooks that let Node 20 run TypeScript straight from the sources (benchmarks, and the child processes
// some tests start): `@baton/*` resolve to packages/*/src (as tsconfig.json's paths say), a `./x.js` import from
// a .ts file finds `./x.ts`, and .ts files are transpiled (types stripped, no type check: `pnpm typecheck` does that).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('../../', import.meta.url));
const TESTING = new Set(['@baton/db/testing', '@baton/executor/testing']);

function workspaceFile(specifier) {
  const m = /^@baton\/(contracts|core|db|queue|executor)(\/testing)?$/.exec(specifier);
  if (!m || (m[2] && !TESTING.has(specifier))) return undefined;
  return path.join(root, 'packages', m[1], 'src', m[2] ? 'testing/index.ts' : 'index.ts');
}

export async function resolve(specifier, context, next) {
  const file = workspaceFile(specifier);
  if (file) return { url: pathToFileURL(file).href, shortCircuit: true };
  if (specifier.startsWith('.') && specifier.endsWith('.js') && context.parentURL?.endsWith('.ts')) {
    const candidate = new URL(specifier.replace(/\.js$/, '.ts'), context.parentURL);
    if (fs.existsSync(fileURLToPath(candidate))) return { url: candidate.href, shortCircuit: true };
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return next(url, context);
  const fileName = fileURLToPath(url);
  const { outputText } = ts.transpileModule(fs.readFileSync(fileName, 'utf8'), {
    fileName,
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      verbatimModuleSyntax: true,
      inlineSourceMap: true,
    },
  });
  return { format: 'module', source: outputText, shortCircuit: true };
}
