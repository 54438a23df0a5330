// What the long-lived processes load at start, read from the bundles bin/baton runs (scripts/bundle.mjs): the modules
// reachable through static imports from an entry. Libraries a process needs only for some settings must stay behind a
// dynamic import, or every server pays their memory (bench/memory): the executor process holds no schema library,
// no database driver and none of the server's; an embedded server on SQLite holds no Redis, PostgreSQL, SAML, AI or
// e-mail library.
import { describe, expect, it } from '@jest/globals';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BUNDLE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../apps/api/dist/bundle');

const read = (file: string) => fs.readFileSync(path.join(BUNDLE, file), 'utf8');

/** The bundle's files an entry reaches through static imports and re-exports, the entry first. */
function staticGraph(entry: string): string[] {
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.shift()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const m of read(file).matchAll(/^(?:import|export)\b[^;]*?\bfrom\s*"\.\/([^"]+)"|^import\s*"\.\/([^"]+)"/gm))
      queue.push((m[1] ?? m[2])!);
  }
  return [...seen];
}

/** The npm packages whose code is inside these files (rolldown heads each module with its path) or imported by name. */
function packagesIn(files: string[]): Set<string> {
  const names = new Set<string>();
  for (const file of files) {
    const text = read(file);
    for (const m of text.matchAll(/^\/\/ \S*?\/node_modules\/\.pnpm\/[^/]+\/node_modules\/((?:@[^/]+\/)?[^/]+)\//gm))
      names.add(m[1]!);
    // A bare specifier's package: `@scope/name` or `name`, without a subpath.
    for (const m of text.matchAll(/^import\b[^;]*?\bfrom\s*"((?:@[^/"]+\/)?[^/".][^/"]*)[^"]*"/gm))
      if (!m[1]!.startsWith('node:')) names.add(m[1]!);
  }
  return names;
}

const ON_DEMAND = ['bullmq', 'ioredis', 'pg', '@node-saml/passport-saml', 'openai', '@anthropic-ai/sdk', 'nodemailer'];

describe('what the bundles load at start', () => {
  if (!fs.existsSync(path.join(BUNDLE, 'cli.js'))) throw new Error(`no bundle at ${BUNDLE}: run pnpm build first`);

  it('the executor process: runPlaybook and node, no schema library, database driver or server library', () => {
    const files = staticGraph('executor-process.js');
    expect(files.length).toBeGreaterThan(1);
    // What it must hold: the run engine.
    expect(files.some((f) => /function runPlaybook\b/.test(read(f)))).toBe(true);
    expect([...packagesIn(files)]).toEqual([]);
  });

  it('an embedded server: none of the libraries only some settings use', () => {
    const serve = /\{ serve \} = await import\("\.\/([^"]+)"\)/.exec(read('cli.js'))?.[1];
    expect(serve).toBeDefined();
    const loaded = packagesIn(staticGraph(serve!));
    // The graph is the server's: it holds what every server needs.
    expect([...loaded]).toEqual(expect.arrayContaining(['express', 'kysely', 'zod', 'better-sqlite3', 'winston']));
    expect(ON_DEMAND.filter((name) => loaded.has(name))).toEqual([]);
  });

  it('and those libraries are in the bundle, behind dynamic imports', () => {
    const everything = packagesIn(fs.readdirSync(BUNDLE).filter((f) => f.endsWith('.js')));
    expect(ON_DEMAND.filter((name) => !everything.has(name))).toEqual([]);
  });
});
