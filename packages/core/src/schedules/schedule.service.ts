// Cron schedules (issue 11 "Schedules"): a named cron expression in a time zone that launches a target (a run, a
// split, a pipeline or a template) as its owner. This file is the CRUD; schedule.scheduler.ts fires them.
import {
  type LaunchTarget,
  NEXT_RUNS_SHOWN,
  type Schedule,
  type ScheduleCreateBody,
  type SchedulePreview,
  type SchedulePreviewBody,
  type ScheduleUpdateBody,
} from '@baton/contracts';
import {
  type AuditRepo,
  DuplicateKeyError,
  type GrantRepo,
  type LaunchRefRepo,
  type PageQuery,
  type SchedulePatch,
  type ScheduleRepo,
  type ScheduleRow,
} from '@baton/db';
import { recordAudit } from '../audit/audit.chain.js';
import { type Authorizer, grantCreatorManage, notFound, type Principal } from '../authz/authorize.js';
import { type Clock, iso } from '../common/clock.js';
import { ConflictError, type FieldError, UnprocessableError, ValidationError } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { type Page, toPage, visiblePageQuery } from '../common/paging.js';
import { type Keyring, openSealedJson } from '../crypto/secret-box.js';
import type { Launcher } from '../launching/launcher.js';
import { ENCRYPTED_PLACEHOLDER } from '../runs/run-launch.js';
import { cronTimesFrom, localTimestamp, nextCronTime, timingProblem } from './schedule.cron.js';

export * from './schedule.cron.js';
export * from './schedule.scheduler.js';

type TxRepos = {
  schedules: Pick<ScheduleRepo, 'insert' | 'update' | 'delete'>;
  grants: Pick<GrantRepo, 'insert' | 'deleteMentioning'>;
  audit: Pick<AuditRepo, 'append'>;
  launchRefs: Pick<LaunchRefRepo, 'replace' | 'deleteOwner'>;
};

export interface ScheduleServiceDeps {
  schedules: Pick<ScheduleRepo, 'findById' | 'list'>;
  transaction: <T>(fn: (r: TxRepos) => Promise<T>) => Promise<T>;
  authz: Pick<Authorizer, 'requireCreator' | 'requireVisible' | 'visibleIds'>;
  clock: Clock;
  keyring: Pick<Keyring, 'encrypt' | 'decrypt'>;
  launcher: Pick<Launcher, 'launch' | 'splitSecrets' | 'referencedIds'>;
}

/** A schedule as the API shows it: its next due time in UTC and in its own zone. */
export function toScheduleView(row: ScheduleRow): Schedule {
  return {
    id: row.id,
    name: row.name,
    cron: row.cron,
    timezone: row.timezone,
    enabled: row.enabled === 1,
    target: row.target as LaunchTarget,
    next_run_at: row.next_run_at,
    next_run_at_local: row.next_run_at === null ? null : localTimestamp(new Date(row.next_run_at), row.timezone),
    next_runs:
      row.next_run_at === null
        ? []
        : cronTimesFrom(row.cron, row.timezone, new Date(row.next_run_at), NEXT_RUNS_SHOWN).map(iso),
    last_run_id: row.last_run_id,
    last_fired_at: row.last_fired_at,
    last_error: row.last_error,
    created_by: row.created_by,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** A few safe words on what a target starts, for audit summaries (never answers, vars or secrets). */
export function targetWords(target: LaunchTarget): string {
  if (target.run) {
    const what =
      target.run.shards !== undefined && target.run.shards >= 2 ? `a split of ${target.run.shards}` : 'a run';
    return target.run.project_id ? `${what} of project ${target.run.project_id}` : `${what} of an inline playbook`;
  }
  if (target.pipeline) return `a pipeline of ${target.pipeline.steps.length} steps`;
  return `template ${target.template_id}`;
}

/** Where a target's own fields sit in a schedule request. */
function targetField(target: LaunchTarget): string {
  if (target.run) return 'body.target.run';
  if (target.pipeline) return 'body.target.pipeline';
  return 'body.target';
}

/** A submission's field errors (at `body…`) moved under the schedule's `body.target…`. */
function underTarget(err: unknown, target: LaunchTarget): unknown {
  if (!(err instanceof ValidationError) && !(err instanceof UnprocessableError)) return err;
  const prefix = targetField(target);
  const errors: FieldError[] = (err.errors ?? []).map((e) => ({
    ...e,
    path: e.path.replace(/^body(?=\.|$)/, prefix),
  }));
  return err instanceof ValidationError
    ? new ValidationError(err.message, errors)
    : new UnprocessableError(err.message, errors);
}

export function createScheduleService(deps: ScheduleServiceDeps) {
  async function visible(p: Principal, id: string, need: 'use' | 'manage'): Promise<ScheduleRow> {
    return deps.authz.requireVisible(p, need, { kind: 'schedule', id, row: await deps.schedules.findById(id) });
  }

  function checkTiming(cron: string, timezone: string): void {
    const problem = timingProblem(cron, timezone);
    if (problem) {
      throw new ValidationError(`${problem.field} ${problem.message}`, [
        { path: `body.${problem.field}`, message: problem.message },
      ]);
    }
  }

  /** The caller must be able to launch the target now: every submission check, nothing stored. */
  async function checkTarget(p: Principal, target: LaunchTarget): Promise<void> {
    try {
      await deps.launcher.launch(p, target, { origin: 'schedule', validateOnly: true });
    } catch (err) {
      throw underTarget(err, target);
    }
  }

  /** The target as stored (password answers shown as the placeholder) and its sealed password answers. */
  async function seal(
    p: Principal,
    target: LaunchTarget,
  ): Promise<{ target: LaunchTarget; secretsEnc: string | null }> {
    const split = await deps.launcher.splitSecrets(p, target);
    if (!split.secrets) return { target: split.target, secretsEnc: null };
    const placeholders = Object.fromEntries(Object.keys(split.secrets).map((k) => [k, ENCRYPTED_PLACEHOLDER]));
    return {
      target: { ...split.target, survey_answers: { ...split.target.survey_answers, ...placeholders } },
      secretsEnc: deps.keyring.encrypt(JSON.stringify(split.secrets)),
    };
  }

  /**
   * A target sent back with `$encrypted$` for a password answer this schedule has stored keeps the stored answer
   * (the view shows only the placeholder, so a client cannot send the value back). Without a stored answer the
   * placeholder stays: for a template it means the question's default.
   */
  function keepStoredAnswers(row: ScheduleRow, target: LaunchTarget): LaunchTarget {
    if (row.target_secrets_enc === null || !target.survey_answers) return target;
    const stored = openSealedJson<Record<string, string>>(deps.keyring, row.target_secrets_enc);
    const answers = { ...target.survey_answers };
    for (const [k, v] of Object.entries(answers))
      if (v === ENCRYPTED_PLACEHOLDER && k in stored) answers[k] = stored[k];
    return { ...target, survey_answers: answers };
  }

  const nextAfter = (cron: string, timezone: string, now: Date): string | null => {
    const next = nextCronTime(cron, timezone, now);
    return next === null ? null : iso(next);
  };

  async function unique<T>(name: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof DuplicateKeyError) throw new ConflictError(`a schedule named ${name} already exists`);
      throw err;
    }
  }

  const templateGone = (target: LaunchTarget) => notFound('template', target.template_id ?? '');

  return {
    /** Needs a role that may create, and use on everything the target names (checked as a submission would). */
    async create(p: Principal, body: ScheduleCreateBody): Promise<Schedule> {
      deps.authz.requireCreator(p);
      checkTiming(body.cron, body.timezone);
      await checkTarget(p, body.target);
      const sealed = await seal(p, body.target);
      const now = deps.clock();
      const at = iso(now);
      const row: ScheduleRow = {
        id: newId('sch', now.getTime()),
        name: body.name,
        cron: body.cron.trim(),
        timezone: body.timezone,
        enabled: body.enabled ? 1 : 0,
        target: sealed.target,
        target_secrets_enc: sealed.secretsEnc,
        template_id: body.target.template_id ?? null,
        next_run_at: body.enabled ? nextAfter(body.cron, body.timezone, now) : null,
        last_run_id: null,
        last_fired_at: null,
        last_error: null,
        created_by: p.id,
        created_at: at,
        updated_at: at,
      };
      await unique(body.name, () =>
        deps.transaction(async (r) => {
          if ((await r.schedules.insert(row)) === 'missing_template') throw templateGone(body.target);
          await grantCreatorManage(r.grants, p, row.id, now);
          await r.launchRefs.replace(row.id, deps.launcher.referencedIds(body.target));
          await recordAudit(
            r.audit,
            {
              actor: p.id,
              action: 'schedule.create',
              object: row.id,
              summary: `created schedule ${row.name} (${row.cron} in ${row.timezone}, ${body.enabled ? 'enabled' : 'disabled'}): ${targetWords(body.target)}`,
            },
            deps.clock,
          );
        }),
      );
      return toScheduleView(row);
    },

    /** Admins see every schedule; others those they hold a grant on (directly or through a team). */
    async list(p: Principal, page: PageQuery & { cursor?: string | undefined }): Promise<Page<Schedule>> {
      const rows = await deps.schedules.list(visiblePageQuery(page, await deps.authz.visibleIds(p, 'sch')));
      const result = toPage(rows, page.limit, (x) => x.id);
      return { items: result.items.map(toScheduleView), next: result.next };
    },

    async get(p: Principal, id: string): Promise<Schedule> {
      return toScheduleView(await visible(p, id, 'use'));
    },

    /** When an expression would fire from now, in its zone: the same arithmetic the scheduler uses. */
    preview(body: SchedulePreviewBody): SchedulePreview {
      const cron = body.cron.trim();
      checkTiming(cron, body.timezone);
      const first = nextCronTime(cron, body.timezone, deps.clock());
      const times = first === null ? [] : cronTimesFrom(cron, body.timezone, first, NEXT_RUNS_SHOWN);
      return {
        cron,
        timezone: body.timezone,
        next_runs: times.map(iso),
        next_runs_local: times.map((t) => localTimestamp(t, body.timezone) ?? iso(t)),
      };
    },

    /**
     * Partial update (needs manage). A new target is checked as the caller would submit it. A new cron expression or
     * zone, or enabling, computes the next due time from now; disabling clears it.
     */
    async update(p: Principal, id: string, body: ScheduleUpdateBody): Promise<Schedule> {
      const row = await visible(p, id, 'manage');
      const next = {
        name: body.name ?? row.name,
        cron: body.cron === undefined ? row.cron : body.cron.trim(),
        timezone: body.timezone ?? row.timezone,
        enabled: body.enabled === undefined ? row.enabled : body.enabled ? 1 : 0,
      };
      const retimed = next.cron !== row.cron || next.timezone !== row.timezone;
      if (retimed) checkTiming(next.cron, next.timezone);
      const now = deps.clock();
      const patch: SchedulePatch = { ...next, updated_at: iso(now) };
      if (body.target) {
        const target = keepStoredAnswers(row, body.target);
        await checkTarget(p, target);
        const sealed = await seal(p, target);
        patch.target = sealed.target;
        patch.target_secrets_enc = sealed.secretsEnc;
        patch.template_id = target.template_id ?? null;
      }
      if (next.enabled === 0) patch.next_run_at = null;
      else if (retimed || row.enabled === 0) patch.next_run_at = nextAfter(next.cron, next.timezone, now);

      const changed = [
        ...(Object.keys(next) as Array<keyof typeof next>).filter((k) => next[k] !== row[k]),
        ...(body.target ? ['target'] : []),
      ];
      await unique(next.name, () =>
        deps.transaction(async (r) => {
          const result = await r.schedules.update(id, patch);
          if (result === 'missing') throw notFound('schedule', id);
          if (result === 'missing_template') throw templateGone(body.target!);
          if (body.target) await r.launchRefs.replace(id, deps.launcher.referencedIds(body.target));
          const what = changed.length ? `changed ${changed.join(', ')}` : 'no field changed';
          const aim = body.target ? ` (now ${targetWords(body.target)})` : '';
          await recordAudit(
            r.audit,
            {
              actor: p.id,
              action: 'schedule.update',
              object: id,
              summary: `updated schedule ${next.name}: ${what}${aim}`,
            },
            deps.clock,
          );
        }),
      );
      return toScheduleView({ ...row, ...patch });
    },

    /** Deletes the schedule, its fire slots, references and the grants on it (needs manage). */
    async remove(p: Principal, id: string): Promise<void> {
      const row = await visible(p, id, 'manage');
      await deps.transaction(async (r) => {
        await r.grants.deleteMentioning(id);
        await r.launchRefs.deleteOwner(id);
        if (!(await r.schedules.delete(id))) throw notFound('schedule', id);
        await recordAudit(
          r.audit,
          { actor: p.id, action: 'schedule.delete', object: id, summary: `deleted schedule ${row.name}` },
          deps.clock,
        );
      });
    },
  };
}
export type ScheduleService = ReturnType<typeof createScheduleService>;
