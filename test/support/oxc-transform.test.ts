// The Jest transform (test/support/oxc-transform.mjs): what it keeps and removes of TypeScript, and how it fails.
import { describe, expect, it } from '@jest/globals';

interface Transformer {
  getCacheKey(source: string, filename: string): string;
  process(source: string, filename: string): { code: string; map: string | null };
}
// A plain .mjs without declarations: imported by a computed name so the type checker does not look for its types.
const transformerModule = './oxc-transform.mjs';
const { default: transformer } = (await import(transformerModule)) as { default: Transformer };

describe('the Jest TypeScript transform', () => {
  it('strips types and type-only imports, and keeps every other import as written (verbatimModuleSyntax)', () => {
    const source = [
      "import type { Run } from './run.js';",
      "import { type Shape, used, unused } from './shapes.js';",
      "import './side-effect.js';",
      'export class Box { constructor(private readonly size: number) {} area(): number { return this.size ** 2; } }',
      'export const run: Run | undefined = undefined;',
      'export const shape = (s: Shape): number => used(s);',
      '',
    ].join('\n');
    const { code, map } = transformer.process(source, '/repo/box.ts');
    expect(code).not.toContain('./run.js');
    expect(code).toMatch(/import \{ used, unused \} from "\.\/shapes\.js"/);
    expect(code).toContain('./side-effect.js');
    expect(code).not.toMatch(/: (number|Run|Shape)\b/);
    // A parameter property becomes an assignment; ES2022 is kept as written (no lowering of `**`).
    expect(code).toContain('this.size = size');
    expect(code).toContain('this.size ** 2');
    expect(JSON.parse(map!)).toMatchObject({ version: 3, sources: [expect.stringContaining('box.ts')] });
  });

  it('refuses source that does not parse, naming the file', () => {
    expect(() => transformer.process('export const x: = 1;\n', '/repo/broken.ts')).toThrow(/\/repo\/broken\.ts/);
  });

  it('keys its cache by file name and source', () => {
    const key = transformer.getCacheKey('const a = 1;', '/repo/a.ts');
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(transformer.getCacheKey('const a = 1;', '/repo/a.ts')).toBe(key);
    expect(transformer.getCacheKey('const a = 2;', '/repo/a.ts')).not.toBe(key);
    expect(transformer.getCacheKey('const a = 1;', '/repo/b.ts')).not.toBe(key);
  });
});
