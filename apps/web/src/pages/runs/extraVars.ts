// Extra vars are typed as YAML or JSON (JSON is YAML) and parsed in the browser, so a typo is shown before sending.
import { parse } from 'yaml';

export type ParsedVars = { ok: true; vars: Record<string, unknown> | undefined } | { ok: false; error: string };

/** The text as an object of variables; empty text is no variables. */
export function parseExtraVars(text: string): ParsedVars {
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

/** Labels typed as a list separated by commas or spaces. */
export function parseLabels(text: string): string[] {
  return text.split(/[\s,]+/).filter(Boolean);
}

/** A number field's value, or nothing when empty (the API then uses its default). */
export function optionalNumber(text: string): number | undefined {
  return text.trim() === '' ? undefined : Number(text);
}
