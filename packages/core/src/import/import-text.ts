// Small readers shared by the mappers: variables text (YAML or JSON) and names Baton accepts, unique per kind.
import { parse as parseYaml } from 'yaml';

export type VarsResult = { ok: true; vars: Record<string, unknown> } | { ok: false; reason: string };

/**
 * Variables as AWX and Semaphore keep them: text holding YAML or JSON (possibly empty or `---`), or already an
 * object. A mapping comes back as an object; anything else is a reason. Never throws.
 */
export function readVars(value: unknown): VarsResult {
  if (value === null || value === undefined) return { ok: true, vars: {} };
  if (typeof value === 'object' && !Array.isArray(value)) return { ok: true, vars: value as Record<string, unknown> };
  if (typeof value !== 'string') return { ok: false, reason: 'is neither text nor a mapping' };
  if (value.trim() === '' || value.trim() === '---') return { ok: true, vars: {} };
  let parsed: unknown;
  try {
    // JSON is YAML; one parser reads both. Aliases are capped so a "billion laughs" document stays small.
    parsed = parseYaml(value, { maxAliasCount: 100, uniqueKeys: false });
  } catch (err) {
    return {
      ok: false,
      reason: `is not YAML or JSON (${err instanceof Error ? err.message.split('\n')[0] : 'unreadable'})`,
    };
  }
  if (parsed === null || parsed === undefined) return { ok: true, vars: {} };
  if (typeof parsed !== 'object' || Array.isArray(parsed))
    return { ok: false, reason: 'is not a mapping of names to values' };
  return { ok: true, vars: parsed as Record<string, unknown> };
}

const MAX_NAME = 100;
// eslint-disable-next-line no-control-regex -- control characters are what Baton names refuse
const CONTROL = /[\u0000-\u001f\u007f]/g;

/** Baton names (trimmed, 1–100 characters, no control characters), unique within each kind. */
export function createNameBook() {
  const taken = new Map<string, Set<string>>();
  return {
    /** `name` made acceptable, and unique among the names given out for `kind` (`name (qualifier)`, then `name 2`…). */
    claim(kind: string, name: string, qualifier?: string): string {
      const used = taken.get(kind) ?? new Set<string>();
      taken.set(kind, used);
      const clean = (s: string) => s.replace(CONTROL, ' ').trim().slice(0, MAX_NAME).trim() || 'unnamed';
      const base = clean(name);
      const candidates = [base, ...(qualifier ? [clean(`${base} (${qualifier})`)] : [])];
      let pick = candidates.find((c) => !used.has(c));
      for (let n = 2; pick === undefined; n++) {
        const suffix = ` ${n}`;
        const c = base.slice(0, MAX_NAME - suffix.length).trimEnd() + suffix;
        if (!used.has(c)) pick = c;
      }
      used.add(pick);
      return pick;
    },
  };
}
export type NameBook = ReturnType<typeof createNameBook>;
