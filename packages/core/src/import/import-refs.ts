// PlanRefs inside specs and targets: which keys a value names, and the value with each replaced by its id.
import type { PlanRef } from './import-plan.js';

const isRef = (v: unknown): v is PlanRef =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as PlanRef).$ref === 'string';

/** Every key a value refers to through PlanRefs, at any depth. */
export function refsIn(value: unknown, out: string[] = []): string[] {
  if (isRef(value)) out.push(value.$ref);
  else if (Array.isArray(value)) for (const v of value) refsIn(v, out);
  else if (typeof value === 'object' && value !== null) for (const v of Object.values(value)) refsIn(v, out);
  return out;
}

/** The value with every PlanRef replaced by `ids.get(key)` (the caller checked each key is there). */
export function resolveRefs(value: unknown, ids: ReadonlyMap<string, string>): unknown {
  if (isRef(value)) return ids.get(value.$ref);
  if (Array.isArray(value)) return value.map((v) => resolveRefs(v, ids));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveRefs(v, ids)]));
  return value;
}
