// What the Semaphore mapper's parts share while they build one plan: the objects so far, the report lists, Baton
// names already given per kind, and which source objects became which plan keys (or why they did not).
import type { ImportSkipped } from '@baton/contracts';
import type { PlannedObject } from '../import-plan.js';
import type { CronRead } from './semaphore-triggers.js';

/** Baton's ObjectName limit (common.schemas.ts). */
const MAX_NAME = 100;
// eslint-disable-next-line no-control-regex -- control characters are what ObjectName refuses
const CONTROL = /[\u0000-\u001f\u007f]+/g;

/** `text` cut to at most `max` UTF-16 units without splitting a surrogate pair. */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = text.slice(0, max);
  return /[\uD800-\uDBFF]$/.test(head) ? head.slice(0, -1) : head;
}

export interface MapContext {
  objects: PlannedObject[];
  skipped: ImportSkipped[];
  warnings: string[];
  /** Baton names taken, per Baton kind */
  names: Map<string, Set<string>>;
  /** plan keys taken */
  keys: Set<string>;
  /** per kind and wanted name (or key), the next number to try: repeats cost no search */
  next: Map<string, number>;
  /** cron text → how Baton reads it (semaphore-triggers.ts batonCron) */
  crons: Map<string, CronRead>;
  /** plan key → why the source object behind it was not imported */
  notImported: Map<string, string>;
}

export function newContext(): MapContext {
  return {
    objects: [],
    skipped: [],
    warnings: [],
    names: new Map(),
    keys: new Set(),
    next: new Map(),
    crons: new Map(),
    notImported: new Map(),
  };
}

/**
 * A Baton name for `raw` that ObjectName accepts and no earlier object of `kind` has: control characters become
 * spaces, trimmed, cut to 100; a taken name gets " (2)", " (3)"… A name changed on the way is warned about.
 */
export function batonName(ctx: MapContext, kind: string, raw: string, fallback: string): string {
  const clean = raw.replace(CONTROL, ' ').trim();
  const base = cut(clean, MAX_NAME).trim() || fallback;
  const taken = ctx.names.get(kind) ?? new Set<string>();
  ctx.names.set(kind, taken);
  let name = base;
  const counter = `${kind}\u0000${base}`;
  for (let n = ctx.next.get(counter) ?? 2; taken.has(name); n++) {
    const suffix = ` (${n})`;
    name = `${cut(base, MAX_NAME - suffix.length).trim()}${suffix}`;
    ctx.next.set(counter, n + 1);
  }
  taken.add(name);
  if (name !== raw) ctx.warnings.push(`${kind} "${cut(raw, 200)}" is named "${name}" in Baton`);
  return name;
}

/** A plan key for a source object: `<kind>:<name>`, with `#2`, `#3`… when the name repeats. */
export function planKey(ctx: MapContext, kind: string, name: string): string {
  const base = `${kind}:${name}`;
  let key = base;
  for (let n = ctx.next.get(base) ?? 2; ctx.keys.has(key); n++) {
    key = `${base}#${n}`;
    ctx.next.set(base, n + 1);
  }
  ctx.keys.add(key);
  return key;
}

export function skip(ctx: MapContext, kind: string, name: string, reason: string, key?: string): void {
  ctx.skipped.push({ kind, name, reason });
  if (key !== undefined) ctx.notImported.set(key, reason);
}

/** `value` when it is a non-empty string after trimming, else undefined. */
export function text(value: string | null | undefined): string | undefined {
  const t = value?.trim();
  return t ? t : undefined;
}

/** A list of names in a warning: the first few, and how many more. */
export function listed(items: readonly string[], max = 8): string {
  const shown = items.slice(0, max).join(', ');
  return items.length > max ? `${shown} and ${items.length - max} more` : shown;
}
