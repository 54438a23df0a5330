// What starts Semaphore templates by itself: schedules (a template's `cron` in v2.10, top-level `schedules` later)
// → Baton schedules, and integrations (incoming webhooks) → Baton triggers, which always verify a signature.
import {
  RefGlob,
  type SemaphoreIntegration,
  type SemaphoreSchedule,
  type TriggerEvent,
  type TriggerFilters,
} from '@baton/contracts';
import type { PlannedSchedule, PlannedTrigger } from '../import-plan.js';
import { timingProblem } from '../../schedules/schedule.cron.js';
import { batonName, cut, listed, planKey, skip, text, type MapContext } from './semaphore-context.js';
import type { TemplateRef } from './semaphore-templates.js';

/** How a schedule or integration names its template: the planned template, or why there is none. */
export type TemplateLookup = (
  name: string | null | undefined,
) => { ok: true; value: TemplateRef } | { ok: false; reason: string };

// Maps, not object literals: a source value such as `constructor` must not find Object.prototype's.
const MACROS = new Map([
  ['@yearly', '0 0 1 1 *'],
  ['@annually', '0 0 1 1 *'],
  ['@monthly', '0 0 1 * *'],
  ['@weekly', '0 0 * * 0'],
  ['@daily', '0 0 * * *'],
  ['@midnight', '0 0 * * *'],
  ['@hourly', '0 * * * *'],
]);

export type CronRead = { ok: true; cron: string } | { ok: false; reason: string };

/**
 * The cron Baton reads the same way, or why there is none. Remembered per map in `ctx.crons`: the cron parser is
 * the slowest part of a plan, and backups repeat the same few expressions.
 */
export function batonCron(ctx: MapContext, raw: string): CronRead {
  let read = ctx.crons.get(raw);
  if (!read) {
    read = readCron(raw);
    ctx.crons.set(raw, read);
  }
  return read;
}

function readCron(raw: string): CronRead {
  const trimmed = raw.trim();
  const cron = MACROS.get(trimmed.toLowerCase()) ?? trimmed.replace(/\s+/g, ' ');
  if (trimmed.toLowerCase().startsWith('@every'))
    return { ok: false, reason: `${cut(trimmed, 100)}: intervals (@every) are not cron schedules` };
  const problem = timingProblem(cron, 'UTC');
  return problem ? { ok: false, reason: `cron ${cut(trimmed, 100)}: ${problem.message}` } : { ok: true, cron };
}

export interface ScheduleSource {
  /** the schedule's own name, or the template's for a v2.10 template cron */
  name: string;
  cron: string;
  enabled: boolean;
  template: string | null | undefined;
  source?: SemaphoreSchedule;
}

/** Task-param fields that say nothing a Baton schedule could carry (ids of the source server, a task message). */
const QUIET_PARAMS = new Set(['id', 'project_id', 'template_id', 'message', 'version']);

const isEmpty = (v: unknown) =>
  v === null ||
  v === undefined ||
  v === '' ||
  v === false ||
  (Array.isArray(v) && !v.length) ||
  (typeof v === 'object' && !Array.isArray(v) && !Object.keys(v).length);

/** Plans one schedule, or skips it with the reason. Answers whether it was planned. */
export function mapSchedule(ctx: MapContext, s: ScheduleSource, template: TemplateLookup): boolean {
  const key = planKey(ctx, 'schedule', s.name);
  const cron = batonCron(ctx, s.cron);
  if (!cron.ok) {
    skip(ctx, 'schedule', s.name, cron.reason, key);
    return false;
  }
  const target = template(s.template);
  if (!target.ok) {
    skip(ctx, 'schedule', s.name, target.reason, key);
    return false;
  }
  const where = `schedule "${s.name}"`;
  const planned: PlannedSchedule = {
    kind: 'schedule',
    key,
    name: batonName(ctx, 'schedule', s.name, 'schedule'),
    cron: cron.cron,
    timezone: 'UTC',
    enabled: s.enabled,
    template: target.value.key,
  };
  const params = s.source?.task_params ?? {};
  const ignored: string[] = [];
  for (const [field, value] of Object.entries(params)) {
    if (QUIET_PARAMS.has(field) || isEmpty(value)) continue;
    if (field !== 'params' || typeof value !== 'object' || value === null || Array.isArray(value)) {
      ignored.push(field);
      continue;
    }
    for (const [name, v] of Object.entries(value as Record<string, unknown>)) {
      if (isEmpty(v)) continue;
      const limit =
        name === 'limit' && Array.isArray(v) && v.every((x) => typeof x === 'string')
          ? v
              .map((x: string) => x.trim())
              .filter(Boolean)
              .join(',')
          : undefined;
      if (limit && limit.length <= 4096 && target.value.allowOverrides.includes('limit')) planned.overrides = { limit };
      else ignored.push(`params.${name}`);
    }
  }
  if (ignored.length) ctx.warnings.push(`${where}: task parameters are not imported: ${listed(ignored)}`);
  const repo = text(s.source?.checkable_repository);
  if (repo)
    ctx.warnings.push(
      `${where} ran only when repository "${repo}" had new commits; in Baton it runs at every time it names`,
    );
  ctx.objects.push(planned);
  return true;
}

const GITLAB_EVENTS = new Map<string, TriggerEvent>([
  ['push hook', 'push'],
  ['tag push hook', 'tag_push'],
]);

/** Plans one integration as a trigger, or skips it with the reason. */
export function mapIntegration(ctx: MapContext, i: SemaphoreIntegration, template: TemplateLookup): void {
  const key = planKey(ctx, 'integration', i.name);
  const method = text(i.auth_method) ?? '';
  if (method !== 'github' && method !== 'hmac') {
    skip(
      ctx,
      'integration',
      i.name,
      `${method ? `auth method ${method}` : 'no authentication'}: Baton triggers verify a signature (GitHub or HMAC-SHA256)`,
      key,
    );
    return;
  }
  const target = template(i.template);
  if (!target.ok) {
    skip(ctx, 'integration', i.name, target.reason, key);
    return;
  }
  const where = `integration "${i.name}"`;
  let headerEvents: TriggerEvent[] | undefined;
  const branches: string[] = [];
  const tags: string[] = [];
  const unmapped: string[] = [];
  for (const m of i.matchers ?? []) {
    const k = m.key ?? '';
    const value = m.value ?? '';
    const equals = (m.method ?? '') === 'equals';
    if (equals && m.match_type === 'header' && /^(x-github-event|x-gitea-event|x-gitlab-event)$/i.test(k)) {
      const event = value === 'push' ? 'push' : GITLAB_EVENTS.get(value.toLowerCase());
      if (!event) {
        // Firing on every push instead would run the template when Semaphore never did.
        skip(ctx, 'integration', i.name, `it fires on ${cut(value, 100)} events; Baton triggers fire on pushes`, key);
        return;
      }
      headerEvents = [event];
      continue;
    }
    if (equals && m.match_type === 'body' && k === 'ref') {
      const [, kind, name] = /^refs\/(heads|tags)\/(.+)$/s.exec(value) ?? [];
      if (name !== undefined && RefGlob.safeParse(name).success) {
        (kind === 'heads' ? branches : tags).push(name);
        continue;
      }
    }
    const how = [m.match_type, cut(k, 100), m.method, cut(value, 100)].filter((x) => x).join(' ');
    unmapped.push(`"${m.name ?? ''}" (${how})`);
  }
  for (const m of unmapped) ctx.warnings.push(`${where}: matcher ${m} is not imported: the trigger fires without it`);
  for (const e of i.extract_values ?? [])
    ctx.warnings.push(
      `${where}: extracted value "${e.name ?? ''}" (${e.value_source ?? ''} ${cut(e.key ?? '', 100)} → ${e.variable ?? ''}) is not imported`,
    );
  if ((i.aliases ?? []).length)
    ctx.warnings.push(`${where}: its alias URLs are not imported: the trigger has its own URL`);
  const header = text(i.auth_header);
  if (method === 'hmac' && header && !/^x-hub-signature-256$/i.test(header))
    ctx.warnings.push(
      `${where}: the sender signed in ${cut(header, 100)}; Baton reads X-Hub-Signature-256 or X-Baton-Signature-256`,
    );

  let filters: TriggerFilters | undefined;
  if (branches.length || tags.length) {
    const events: TriggerEvent[] = [
      ...(branches.length ? ['push' as const] : []),
      ...(tags.length ? ['tag_push' as const] : []),
    ];
    filters = { events, ...(branches.length ? { branches } : {}), ...(tags.length ? { tags } : {}) };
  } else if (headerEvents) filters = { events: headerEvents };
  const planned: PlannedTrigger = {
    kind: 'trigger',
    key,
    name: batonName(ctx, 'trigger', i.name, 'trigger'),
    template: target.value.key,
  };
  if (filters) planned.filters = filters;
  ctx.objects.push(planned);
}
