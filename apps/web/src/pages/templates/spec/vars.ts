// Text typed into launch forms, read the way the API wants it. Extra vars are YAML or JSON (JSON is YAML), parsed
// in the browser so a typo is shown before anything is sent.
import { parse, stringify } from 'yaml';

export type ParsedVars = { ok: true; vars: Record<string, unknown> | undefined } | { ok: false; error: string };

/** The text as a mapping of variables; empty text is none. */
export function parseVars(text: string): ParsedVars {
  if (!text.trim()) return { ok: true, vars: undefined };
  let value: unknown;
  try {
    value = parse(text);
  } catch (err) {
    return { ok: false, error: `Not valid YAML or JSON: ${(err as Error).message}` };
  }
  if (value === null || value === undefined) return { ok: true, vars: undefined };
  if (typeof value !== 'object' || Array.isArray(value))
    return {
      ok: false,
      error: 'Extra vars must be a mapping of variable names to values (for example `region: eu` or {"region": "eu"}).',
    };
  return { ok: true, vars: value as Record<string, unknown> };
}

/** Stored vars back as editable YAML. */
export function varsText(vars: Record<string, unknown> | null | undefined): string {
  return vars && Object.keys(vars).length ? stringify(vars) : '';
}

/** A list typed as words separated by commas or spaces (labels). */
export function parseWords(text: string): string[] {
  return text.split(/[\s,]+/).filter(Boolean);
}

/** A list typed one item per line (choices). */
export function parseLines(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}

/** A number field's value, or nothing when empty (the API then uses its default); not-a-number goes as typed. */
export function optionalNumber(text: string): number | string | undefined {
  if (text.trim() === '') return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : text;
}

/** An object without its undefined fields (so JSON bodies carry only what was given). */
export function compact<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
