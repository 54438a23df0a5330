// Validation never throws: every exported zod schema of the contracts, and every schema nested inside one,
// answers hostile input with a failed safeParse, never an exception (an exception in a refinement is a 500).
import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import * as contracts from './index.js';

const huge = 'A'.repeat(1_000_000);
const deep = (levels: number): unknown => (levels === 0 ? {} : { a: deep(levels - 1), b: [deep(0)] });

/** Wrong types, odd strings and URLs, and nested garbage. */
const HOSTILE: unknown[] = [
  undefined,
  null,
  true,
  false,
  0,
  -1,
  1.5,
  NaN,
  Infinity,
  -Infinity,
  Number.MAX_SAFE_INTEGER + 2,
  1e308,
  10n,
  Symbol('s'),
  '',
  ' ',
  'x',
  'not a url',
  huge,
  `https://${huge}`,
  'A\u0000B',
  '\ud800',
  '\udfff\ud800',
  '\u202e',
  '%',
  '%%30',
  '..',
  '../..',
  '/',
  '//',
  '0x10',
  '1e3',
  '-0',
  ' 1 ',
  '[]',
  '{}',
  'null',
  'true',
  '__proto__',
  'constructor',
  'https://',
  'https://[',
  'https://[::ffff:169.254.169.254]/',
  'https://[64:ff9b::a9fe:a9fe]/',
  'http://a b',
  'https://u:p@h/',
  'javascript:alert(1)',
  'file:///etc/passwd',
  'ext::sh -c id',
  'ssh://-oProxyCommand=id/x',
  '\\\\host\\share',
  'https://xn--/',
  'https://%zz/',
  'https://a:99999/',
  'usr_01ARZ3NDEKTSV4RRFFQ69G5FAV',
  'prj_' + 'Z'.repeat(1000),
  [],
  [null],
  [huge],
  ['x', 1, {}],
  // Longer than any array a schema allows; 10,000 wrong elements (an issue each, for every nested schema) only cost time.
  new Array(1_001).fill('x'),
  {},
  Object.create(null),
  { __proto__: { polluted: true } },
  JSON.parse('{"__proto__": {"polluted": true}}'),
  { constructor: { prototype: {} } },
  { toString: 'x', valueOf: 'y' },
  deep(50),
  new Date(NaN),
  () => 1,
];

/** Objects whose every known key holds the same hostile value, so object-level refinements see garbage fields too. */
function shapedGarbage(schema: z.ZodType): unknown[] {
  const def = (schema as unknown as { _zod: { def: { type: string; shape?: Record<string, unknown> } } })._zod.def;
  if (def.type !== 'object' || !def.shape) return [];
  return HOSTILE.map((v) => Object.fromEntries(Object.keys(def.shape!).map((k) => [k, v])));
}

/** The schema and every schema inside it (fields, items, options, keys and values, wrapped and piped types). */
function reachable(root: z.ZodType): z.ZodType[] {
  const seen = new Set<unknown>();
  const out: z.ZodType[] = [];
  const visit = (s: unknown) => {
    if (!(s instanceof z.ZodType) || seen.has(s)) return;
    seen.add(s);
    const def = (s as unknown as { _zod: { def: Record<string, unknown> & { type: string } } })._zod.def;
    // A transform alone assumes its input was validated by what comes before it in the pipe; test the pipe instead.
    if (def.type !== 'transform') out.push(s);
    for (const key of ['innerType', 'element', 'keyType', 'valueType', 'in', 'out', 'left', 'right', 'rest'])
      visit(def[key]);
    for (const key of ['options', 'items']) for (const o of (def[key] as unknown[] | undefined) ?? []) visit(o);
    if (def.shape) for (const field of Object.values(def.shape as Record<string, unknown>)) visit(field);
  };
  visit(root);
  return out;
}

const exported = Object.entries(contracts as Record<string, unknown>).filter(
  (entry): entry is [string, z.ZodType] => entry[1] instanceof z.ZodType,
);

describe('every contracts schema under hostile input', () => {
  it('finds the schemas (the walk is not silently empty)', () => {
    expect(exported.map(([name]) => name)).toEqual(
      expect.arrayContaining([
        'InventorySourceBody',
        'InventoryUrl',
        'CredentialCreateBody',
        'SubmitRunBody',
        'RunBundle',
      ]),
    );
    expect(exported.length).toBeGreaterThan(40);
  });

  it.each(exported)('%s never throws, and nothing nested in it does', (_name, schema) => {
    // Collected, then one assertion: an expect() per call (some 600,000 in all) was most of this file's half minute.
    const thrown: string[] = [];
    for (const s of reachable(schema)) {
      for (const [i, value] of [...HOSTILE, ...shapedGarbage(s)].entries()) {
        try {
          s.safeParse(value);
        } catch (err) {
          thrown.push(`${s._zod.def.type} schema, hostile value #${i}: ${(err as Error).message}`);
        }
      }
    }
    expect(thrown).toEqual([]);
  });

  it('refuses each of the URLs that once made the inventory source body throw, with an issue at url', () => {
    for (const url of ['x', 'not a url', huge]) {
      const parsed = contracts.InventorySourceBody.safeParse({
        name: 'n',
        kind: 'url',
        inventory_id: 'inv_01ARZ3NDEKTSV4RRFFQ69G5FAV',
        url,
      });
      expect(parsed.success).toBe(false);
      expect(parsed.error!.issues.map((i) => i.path.join('.'))).toContain('url');
    }
  });
});
