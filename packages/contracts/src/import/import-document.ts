// Reading an import document defensively: how deep it nests, and a schema's first complaint as a JSON path.
import type { z } from 'zod';
import { unstorableTextReason } from '../common/text.js';

export interface DocumentIssue {
  /** `body` then the keys and indexes down to the problem, dot-separated: `body.templates.2.name` */
  path: string;
  message: string;
}

const pathOf = (segments: ReadonlyArray<PropertyKey>) =>
  ['body', ...segments.map((s) => (typeof s === 'symbol' ? (s.description ?? '?') : String(s)))].join('.');

/**
 * The first place where `doc` nests deeper than `maxDepth` arrays and objects, or a string or key a database cannot
 * store as given (NUL, a lone surrogate), or undefined. Iterative, so a document nested 100 000 deep cannot overflow the stack.
 */
export function documentShapeIssue(doc: unknown, maxDepth: number): DocumentIssue | undefined {
  const stack: Array<{ value: unknown; path: PropertyKey[] }> = [{ value: doc, path: [] }];
  while (stack.length) {
    const { value, path } = stack.pop()!;
    if (typeof value === 'string') {
      const why = unstorableTextReason(value);
      if (why) return { path: pathOf(path), message: why };
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (path.length >= maxDepth)
      return { path: pathOf(path), message: `nests deeper than ${maxDepth} levels of arrays and objects` };
    const entries = Array.isArray(value) ? value.map((v, i) => [i, v] as const) : Object.entries(value);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [k, v] = entries[i]!;
      const why = typeof k === 'string' ? unstorableTextReason(k) : undefined;
      if (why) return { path: pathOf(path), message: `has a key that ${why}` };
      stack.push({ value: v, path: [...path, k] });
    }
  }
  return undefined;
}

/** Parses `doc` with `schema`: the value, or the first issue at its JSON path. Never throws. */
export function parseDocument<S extends z.ZodType>(
  schema: S,
  doc: unknown,
): { ok: true; value: z.output<S> } | { ok: false; issue: DocumentIssue } {
  const result = schema.safeParse(doc);
  if (result.success) return { ok: true, value: result.data };
  const first = result.error.issues[0];
  return {
    ok: false,
    issue: first ? { path: pathOf(first.path), message: first.message } : { path: 'body', message: 'is not valid' },
  };
}
