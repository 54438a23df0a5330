// What the AWX mapper's parts share while they build one plan.
import type { AwxExport, ImportSkipped } from '@baton/contracts';
import type { DocumentProblem, ImportPlan, PlannedObject } from '../import-plan.js';
import { createNameBook, type NameBook } from '../import-text.js';

export interface AwxContext {
  doc: AwxExport;
  names: NameBook;
  now: Date;
  objects: PlannedObject[];
  /** plan keys by kind, to find what was planned */
  planned: Map<string, PlannedObject>;
  skipped: ImportSkipped[];
  warnings: string[];
  add(o: PlannedObject): void;
  skip(kind: string, name: string, reason: string): void;
  warn(message: string): void;
  /** set by a part that finds the document structurally wrong (a cycle, say): the import stops with it */
  problem?: DocumentProblem | undefined;
}

export function createAwxContext(doc: AwxExport, now: Date): AwxContext {
  const ctx: AwxContext = {
    doc,
    names: createNameBook(),
    now,
    objects: [],
    planned: new Map(),
    skipped: [],
    warnings: [],
    add(o) {
      if (ctx.planned.has(o.key)) return;
      ctx.planned.set(o.key, o);
      ctx.objects.push(o);
    },
    skip(kind, name, reason) {
      ctx.skipped.push({ kind, name, reason });
    },
    warn(message) {
      if (!ctx.warnings.includes(message)) ctx.warnings.push(message);
    },
  };
  return ctx;
}

export const toPlan = (ctx: AwxContext, sourceVersion?: string): ImportPlan => ({
  format: 'awx',
  ...(sourceVersion ? { source_version: sourceVersion } : {}),
  objects: ctx.objects,
  skipped: ctx.skipped,
  warnings: ctx.warnings,
});
