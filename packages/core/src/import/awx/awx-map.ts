// `awx export` JSON → an import plan. The structure is checked first (a wrong type anywhere the mapper reads is the
// document's problem, at its path); then kinds are planned in dependency order, roles last (they point at objects).
import { AWX_EXPORT_KINDS, AwxExport, parseDocument } from '@baton/contracts';
import type { ImportMapper } from '../import-plan.js';
import { createAwxContext, toPlan } from './awx-context.js';
import { planIdentity } from './awx-identity.js';
import { planCredentials, planInventories, planInventorySources, planProjects } from './awx-inputs.js';
import { planJobTemplates, planSchedules, planWorkflows } from './awx-templates.js';

/** Kinds awx export writes that Baton has nothing for: each object is listed as skipped. */
const UNMAPPED: Record<string, string> = {
  notification_templates: 'notifications are not imported (Baton does not send any yet)',
  execution_environments: 'Baton runs ansible on its own hosts, not in execution environment images',
  applications: 'OAuth applications have no Baton equivalent',
};

export function mapAwxExport(now: Date = new Date()): ImportMapper {
  return (input) => {
    if (typeof input !== 'object' || input === null || Array.isArray(input))
      return { ok: false, problem: { path: 'body', message: 'must be the JSON object awx export writes' } };
    const parsed = parseDocument(AwxExport, input);
    if (!parsed.ok) return { ok: false, problem: parsed.issue };
    const doc = parsed.value;
    const known = new Set<string>(AWX_EXPORT_KINDS);
    if (!Object.keys(doc).some((k) => known.has(k)))
      return {
        ok: false,
        problem: {
          path: 'body',
          message: `holds none of the kinds awx export writes (${AWX_EXPORT_KINDS.join(', ')})`,
        },
      };
    const ctx = createAwxContext(doc, now);
    for (const k of Object.keys(doc)) if (!known.has(k)) ctx.warn(`${k}: not a kind awx export writes; ignored`);
    for (const k of AWX_EXPORT_KINDS)
      if (doc[k] === null) ctx.warn(`${k}: the exporting user could not read them (null in the export)`);
    for (const [kind, reason] of Object.entries(UNMAPPED))
      for (const o of (doc[kind as keyof typeof UNMAPPED & keyof AwxExport] as
        Array<{ name: string }> | null | undefined) ?? [])
        ctx.skip(kind.replace(/s$/, ''), o.name, reason);

    planCredentials(ctx);
    planProjects(ctx);
    planInventories(ctx);
    if (ctx.problem) return { ok: false, problem: ctx.problem };
    planInventorySources(ctx);
    const jobs = planJobTemplates(ctx);
    planWorkflows(ctx, jobs);
    planSchedules(ctx);
    planIdentity(ctx);
    return { ok: true, plan: toPlan(ctx) };
  };
}
