// The import checker (scripts/check-imports.mjs) against small fixture trees: each rule must catch its breach.
import { afterEach, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const checker = path.resolve('scripts/check-imports.mjs');
const trees: string[] = [];

function check(files: Record<string, string>): { ok: boolean; output: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-imports-'));
  trees.push(root);
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  }
  const r = spawnSync(process.execPath, [checker, root], { encoding: 'utf8' });
  return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` };
}

afterEach(() => {
  for (const t of trees.splice(0)) fs.rmSync(t, { recursive: true, force: true });
});

describe('the import checker', () => {
  it('passes a tree that keeps the rules', () => {
    const r = check({
      'packages/core/src/a.ts':
        "import crypto from 'node:crypto';\nimport type { Db } from '@baton/db';\nimport { DuplicateKeyError } from '@baton/db';\nexport const a = 1;\n",
      'packages/db/src/b.ts': "import { Kysely } from 'kysely';\nimport pg from 'pg';\nexport const b = 2;\n",
      'packages/core/src/a.test.ts': "import { it } from '@jest/globals';\nimport supertest from 'supertest';\n",
    });
    expect(r.output).toContain('imports ok');
    expect(r.ok).toBe(true);
  });

  it.each([
    ['pg', "import pg from 'pg';\n"],
    ['ioredis', "import Redis from 'ioredis';\n"],
    ['express', "import type { Request } from 'express';\n"],
    ['a bare Node builtin without node:', "import fs from 'fs';\n"],
    ['a dynamic import', "export const load = () => import('bullmq');\n"],
  ])('refuses core importing %s', (_what, source) => {
    const r = check({ 'packages/core/src/runs/x.ts': source });
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/packages\/core may not import/);
  });

  it('refuses core importing a value from db beyond the listed ones, and a relative import across units', () => {
    const value = check({ 'packages/core/src/x.ts': "import { createDatabase } from '@baton/db';\n" });
    expect(value.ok).toBe(false);
    expect(value.output).toContain('may import only types from @baton/db');
    const across = check({
      'packages/core/src/x.ts': "import { y } from '../../db/src/y.js';\n",
      'packages/db/src/y.ts': 'export const y = 1;\n',
    });
    expect(across.ok).toBe(false);
    expect(across.output).toContain('reaches into packages/db');
  });

  it('refuses executor importing Redis and contracts importing anything but zod', () => {
    expect(check({ 'packages/executor/src/x.ts': "import Redis from 'ioredis';\n" }).ok).toBe(false);
    expect(check({ 'packages/contracts/src/x.ts': "import fs from 'node:fs';\n" }).ok).toBe(false);
    expect(check({ 'packages/contracts/src/x.ts': "import { z } from 'zod';\n" }).ok).toBe(true);
  });

  it('finds an import cycle', () => {
    const r = check({
      'packages/core/src/a.ts': "import { b } from './b.js';\nexport const a = b;\n",
      'packages/core/src/b.ts': "import { a } from './a.js';\nexport const b = a;\n",
    });
    expect(r.ok).toBe(false);
    expect(r.output).toContain('import cycle');
  });
});
