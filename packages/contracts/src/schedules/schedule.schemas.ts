import { z } from 'zod';
import { checkedBy, idOf, NO_CONTROL_CHARACTERS, ObjectName, Timestamp } from '../common/common.schemas.js';
import { LaunchTarget } from '../launching/launch-target.schemas.js';

/** How many due times a schedule lists in `next_runs`. */
export const NEXT_RUNS_SHOWN = 5;

/** Longest cron expression accepted (six fields of lists and ranges fit easily). */
export const MAX_CRON_CHARS = 200;

/**
 * Why a cron expression's shape is refused, or undefined: 5 fields (minute hour day-of-month month day-of-week) or 6
 * (seconds first), separated by spaces. No `@daily`-style macros and no `H` (a random value would move the schedule
 * each time it is read). Whether each field's values are in range is checked with the cron parser in core.
 */
export function cronShapeProblem(expr: string): string | undefined {
  if (expr.length === 0 || expr.length > MAX_CRON_CHARS) return `must be 1 to ${MAX_CRON_CHARS} characters`;
  if (!NO_CONTROL_CHARACTERS.test(expr.replace(/\t/g, ' '))) return 'must not contain control characters';
  const fields = expr.trim().split(/\s+/).filter(Boolean);
  if (fields.length !== 5 && fields.length !== 6)
    return `must have 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first), not ${fields.length}`;
  if (fields.some((f) => f.split(',').some((item) => /^H([(/#]|$)/i.test(item))))
    return 'the H (hash) character is not supported: give explicit values';
  return undefined;
}

/** Why a time zone name is refused, or undefined when it is an IANA zone this server knows (e.g. Europe/Berlin, UTC). */
export function timeZoneProblem(tz: string): string | undefined {
  if (tz.length === 0 || tz.length > 64 || !/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(tz))
    return 'must be an IANA time zone name such as Europe/Berlin or UTC';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return undefined;
  } catch {
    return `${tz} is not a time zone this server knows (IANA names such as Europe/Berlin or UTC)`;
  }
}

export const CronExpression = z.string().superRefine(checkedBy(cronShapeProblem)).meta({
  description:
    '5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first); `*`, lists, ranges, steps, names (JAN, MON), `L` and `#`',
  example: '30 2 * * 1-5',
});

export const TimeZone = z
  .string()
  .superRefine(checkedBy(timeZoneProblem))
  .meta({ description: 'IANA time zone the cron expression is read in', example: 'Europe/Berlin' });

export const ScheduleCreateBody = z.strictObject({
  name: ObjectName,
  cron: CronExpression,
  timezone: TimeZone.default('UTC'),
  enabled: z.boolean().default(true),
  target: LaunchTarget,
});
export type ScheduleCreateBody = z.infer<typeof ScheduleCreateBody>;

/** POST /v1/schedules/preview: when an expression would fire, before anything is saved. */
export const SchedulePreviewBody = z.strictObject({ cron: CronExpression, timezone: TimeZone.default('UTC') });
export type SchedulePreviewBody = z.infer<typeof SchedulePreviewBody>;

export const SchedulePreview = z
  .object({
    cron: z.string(),
    timezone: z.string(),
    next_runs: z.array(z.string()).meta({ description: 'the next five due times from now, UTC (RFC 3339)' }),
    next_runs_local: z
      .array(z.string())
      .meta({ description: 'the same times in the schedule’s zone, with that zone’s offset then' }),
  })
  .meta({ id: 'SchedulePreview' });
export type SchedulePreview = z.infer<typeof SchedulePreview>;

export const ScheduleUpdateBody = z
  .strictObject({
    name: ObjectName.optional(),
    cron: CronExpression.optional(),
    timezone: TimeZone.optional(),
    enabled: z.boolean().optional(),
    target: LaunchTarget.optional(),
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), {
    message: 'give at least one of name, cron, timezone, enabled, target',
  });
export type ScheduleUpdateBody = z.infer<typeof ScheduleUpdateBody>;

export const Schedule = z
  .object({
    id: z.string(),
    name: z.string(),
    cron: z.string(),
    timezone: z.string(),
    enabled: z.boolean(),
    target: LaunchTarget.meta({
      description: 'what it starts; password answers of a template target are shown as "$encrypted$"',
    }),
    next_run_at: Timestamp.nullable().meta({ description: 'the next due time in UTC; null while disabled' }),
    next_run_at_local: z.string().nullable().meta({
      description: 'the same instant in the schedule’s time zone, RFC 3339 with its offset',
      example: '2026-11-26T02:30:00+01:00',
    }),
    next_runs: z.array(Timestamp).meta({
      description: `the next ${NEXT_RUNS_SHOWN} due times in UTC, next_run_at first (fewer when the expression runs out); empty while disabled`,
    }),
    last_run_id: z.string().nullable(),
    last_fired_at: Timestamp.nullable(),
    last_error: z
      .string()
      .nullable()
      .meta({ description: 'why the last fire could not submit; null after a fire that did' }),
    created_by: z.string().meta({ description: 'the owner: fired runs are submitted as this user' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Schedule' });
export type Schedule = z.infer<typeof Schedule>;

export const ScheduleIdParams = z.strictObject({ id: idOf('sch') });
