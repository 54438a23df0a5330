// Writers for templates, schedules, triggers and approval policies. Template specs are checked by their schemas
// only: the playbook's presence can only be checked against a synced project, and an import syncs nothing.
import crypto from 'node:crypto';
import {
  effectiveTriggerFilters,
  type LaunchTarget,
  PolicyCreateBody,
  ScheduleCreateBody,
  TemplateCreateBody,
  type TriggerFilters,
  TriggerCreateBody,
} from '@baton/contracts';
import { grantCreatorManage } from '../authz/authorize.js';
import { iso } from '../common/clock.js';
import { newId } from '../common/ids.js';
import { specReferences } from '../launching/launcher.js';
import { nextCronTime, timingProblem } from '../schedules/schedule.cron.js';
import type { PlannedPolicy, PlannedSchedule, PlannedTemplate, PlannedTrigger } from './import-plan.js';
import { resolveRefs } from './import-refs.js';
import { audit, checkBody, refused, type Writer } from './import-write.js';

type TemplateBody = Extract<TemplateCreateBody, { kind: 'run' }> | Extract<TemplateCreateBody, { kind: 'pipeline' }>;

const targetRefs = (t: LaunchTarget) => [t.template_id!, ...(t.overrides ? specReferences(t.overrides) : [])];

export const templateWriter: Writer<PlannedTemplate, TemplateBody> = {
  check(o, name, ids, w) {
    // Password defaults never come from an export (both tools hide them); one that does is dropped, not stored clear.
    const survey = o.survey?.map((q) => {
      if (q.type !== 'password' || q.default === undefined) return q;
      w.warn(`template ${name}: the default of password question ${q.variable} was dropped (set it in Baton)`);
      const { default: _dropped, ...rest } = q;
      void _dropped;
      return rest;
    });
    return checkBody(TemplateCreateBody, {
      name,
      kind: o.template_kind,
      ...(o.description ? { description: o.description } : {}),
      spec: resolveRefs(o.spec, ids),
      ...(survey?.length ? { survey } : {}),
      ...(o.allow_overrides?.length ? { allow_overrides: o.allow_overrides } : {}),
    }) as ReturnType<Writer<PlannedTemplate, TemplateBody>['check']>;
  },
  async insert(w, b) {
    const id = newId('tpl', w.now.getTime());
    await w.tx.templates.insert({
      id,
      name: b.name,
      description: b.description ?? null,
      kind: b.kind,
      spec: b.spec as Record<string, unknown>,
      survey: (b.survey as Array<Record<string, unknown>> | undefined) ?? null,
      secret_defaults_enc: null,
      allow_overrides: b.allow_overrides ?? [],
      created_by: w.importer.id,
      created_at: w.at,
      updated_at: w.at,
    });
    await grantCreatorManage(w.tx.grants, w.importer, id, w.now);
    await w.tx.launchRefs.replace(id, specReferences(b.spec));
    await audit(w, 'template.create', id, `imported ${b.kind} template ${b.name} from ${w.source}`);
    return id;
  },
  async update(w, id, b) {
    await w.tx.templates.update(id, {
      description: b.description ?? null,
      kind: b.kind,
      spec: b.spec as Record<string, unknown>,
      survey: (b.survey as Array<Record<string, unknown>> | undefined) ?? null,
      secret_defaults_enc: null,
      allow_overrides: b.allow_overrides ?? [],
      updated_at: w.at,
    });
    await w.tx.launchRefs.replace(id, specReferences(b.spec));
    await audit(w, 'template.update', id, `updated ${b.kind} template ${b.name} from ${w.source}`);
    return undefined;
  },
};

type ScheduleBody = ScheduleCreateBody;

export const scheduleWriter: Writer<PlannedSchedule, ScheduleBody> = {
  check(o, name, ids) {
    const timing = timingProblem(o.cron.trim(), o.timezone);
    if (timing) return refused(`${timing.field}: ${timing.message}`);
    const target = {
      template_id: ids.get(o.template),
      ...(o.overrides ? { overrides: resolveRefs(o.overrides, ids) } : {}),
      ...(o.survey_answers ? { survey_answers: o.survey_answers } : {}),
    };
    return checkBody(ScheduleCreateBody, {
      name,
      cron: o.cron.trim(),
      timezone: o.timezone,
      enabled: o.enabled,
      target,
    });
  },
  async insert(w, b) {
    const id = newId('sch', w.now.getTime());
    const next = b.enabled ? nextCronTime(b.cron, b.timezone, w.now) : null;
    await w.tx.schedules.insert({
      id,
      name: b.name,
      cron: b.cron,
      timezone: b.timezone,
      enabled: b.enabled ? 1 : 0,
      target: b.target as Record<string, unknown>,
      target_secrets_enc: null,
      template_id: b.target.template_id ?? null,
      next_run_at: next && iso(next),
      last_run_id: null,
      last_fired_at: null,
      last_error: null,
      created_by: w.importer.id,
      created_at: w.at,
      updated_at: w.at,
    });
    await grantCreatorManage(w.tx.grants, w.importer, id, w.now);
    await w.tx.launchRefs.replace(id, targetRefs(b.target));
    const state = b.enabled ? 'enabled' : 'disabled';
    await audit(
      w,
      'schedule.create',
      id,
      `imported schedule ${b.name} (${b.cron} in ${b.timezone}, ${state}) from ${w.source}`,
    );
    return id;
  },
  async update(w, id, b) {
    const next = b.enabled ? nextCronTime(b.cron, b.timezone, w.now) : null;
    await w.tx.schedules.update(id, {
      cron: b.cron,
      timezone: b.timezone,
      enabled: b.enabled ? 1 : 0,
      target: b.target as Record<string, unknown>,
      target_secrets_enc: null,
      template_id: b.target.template_id ?? null,
      next_run_at: next && iso(next),
      updated_at: w.at,
    });
    await w.tx.launchRefs.replace(id, targetRefs(b.target));
    await audit(w, 'schedule.update', id, `updated schedule ${b.name} (${b.cron} in ${b.timezone}) from ${w.source}`);
    return undefined;
  },
};

type TriggerBody = { name: string; target: LaunchTarget; filters?: TriggerFilters | undefined };

/** Imported triggers require signatures; their secret is new and shown by POST /v1/triggers/{id}/rotate-secret. */
export const triggerWriter: Writer<PlannedTrigger, TriggerBody> = {
  check(o, name, ids) {
    return checkBody(TriggerCreateBody, {
      name,
      target: { template_id: ids.get(o.template) },
      require_signature: true,
      ...(o.filters ? { filters: o.filters } : {}),
    });
  },
  async insert(w, b) {
    const id = newId('trg', w.now.getTime());
    await w.tx.triggers.insert({
      id,
      name: b.name,
      token: crypto.randomBytes(32).toString('base64url'),
      secret_enc: w.keyring.encrypt(crypto.randomBytes(32).toString('base64url')),
      require_signature: 1,
      filters: effectiveTriggerFilters(b.filters),
      target: b.target as Record<string, unknown>,
      target_secrets_enc: null,
      template_id: b.target.template_id ?? null,
      last_delivery_at: null,
      last_run_id: null,
      created_by: w.importer.id,
      created_at: w.at,
      updated_at: w.at,
    });
    await grantCreatorManage(w.tx.grants, w.importer, id, w.now);
    await w.tx.launchRefs.replace(id, targetRefs(b.target));
    await audit(w, 'trigger.create', id, `imported trigger ${b.name} (signature required) from ${w.source}`);
    return id;
  },
  async update(w, id, b) {
    await w.tx.triggers.update(id, {
      require_signature: 1,
      filters: effectiveTriggerFilters(b.filters),
      target: b.target as Record<string, unknown>,
      target_secrets_enc: null,
      template_id: b.target.template_id ?? null,
      updated_at: w.at,
    });
    await w.tx.launchRefs.replace(id, targetRefs(b.target));
    await audit(w, 'trigger.update', id, `updated trigger ${b.name} from ${w.source} (its token and secret kept)`);
    return undefined;
  },
};

export const policyWriter: Writer<PlannedPolicy, PolicyCreateBody> = {
  check(o, name, ids) {
    const present = (keys: string[] | undefined) => {
      const found = (keys ?? []).map((k) => ids.get(k)).filter((id): id is string => id !== undefined);
      return found.length ? found : undefined;
    };
    const approvers = {
      ...(present(o.approvers.users) ? { users: present(o.approvers.users) } : {}),
      ...(present(o.approvers.teams) ? { teams: present(o.approvers.teams) } : {}),
      ...(o.approvers.roles?.length ? { roles: o.approvers.roles } : {}),
    };
    return checkBody(PolicyCreateBody, {
      name,
      ...(o.description ? { description: o.description } : {}),
      match: { templates: o.templates.map((k) => ids.get(k)) },
      approvers,
      ...(o.expires_after_s !== undefined ? { expires_after_s: o.expires_after_s } : {}),
    });
  },
  async insert(w, b) {
    const id = newId('pol', w.now.getTime());
    await w.tx.policies.insert({
      id,
      name: b.name,
      description: b.description ?? null,
      enabled: b.enabled ? 1 : 0,
      match: b.match,
      approvers: b.approvers,
      min_approvals: b.min_approvals,
      expires_after_s: b.expires_after_s ?? null,
      created_by: w.importer.id,
      created_at: w.at,
      updated_at: w.at,
    });
    await audit(w, 'policy.create', id, `imported approval policy ${b.name} from ${w.source}`);
    return id;
  },
  async update(w, id, b) {
    await w.tx.policies.update(id, {
      description: b.description ?? null,
      enabled: b.enabled ? 1 : 0,
      match: b.match,
      approvers: b.approvers,
      min_approvals: b.min_approvals,
      expires_after_s: b.expires_after_s ?? null,
      updated_at: w.at,
    });
    await audit(w, 'policy.update', id, `updated approval policy ${b.name} from ${w.source}`);
    return undefined;
  },
};
