// Cron arithmetic for schedules (issue 11 "Schedules"): every due time comes from cron-parser read in the schedule's
// time zone, so DST gaps and repeats are whatever cron-parser does there. Nothing here throws: a parser failure is
// an answer (a problem text, or no next time).
import { cronShapeProblem, timeZoneProblem } from '@baton/contracts';
import { CronExpressionParser } from 'cron-parser';

/** A field of a schedule whose timing is refused, and why. */
export interface TimingProblem {
  field: 'cron' | 'timezone';
  message: string;
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Why this cron expression in this zone cannot be scheduled, or undefined when it can. */
export function timingProblem(cron: string, timezone: string): TimingProblem | undefined {
  const shape = cronShapeProblem(cron);
  if (shape !== undefined) return { field: 'cron', message: shape };
  const zone = timeZoneProblem(timezone);
  if (zone !== undefined) return { field: 'timezone', message: zone };
  // The expression alone first (in UTC), so its own faults are reported at `cron`…
  try {
    CronExpressionParser.parse(cron.trim(), { currentDate: new Date(0), tz: 'UTC' }).next();
  } catch (err) {
    return { field: 'cron', message: `not a valid cron expression: ${messageOf(err)}` };
  }
  // …then in its zone, which the parser may still refuse.
  try {
    CronExpressionParser.parse(cron.trim(), { currentDate: new Date(), tz: timezone }).next();
  } catch (err) {
    return { field: 'timezone', message: `the cron expression cannot be read in ${timezone}: ${messageOf(err)}` };
  }
  return undefined;
}

/** The first time the expression matches strictly after `after`, in `timezone`; null when there is none. */
export function nextCronTime(cron: string, timezone: string, after: Date): Date | null {
  try {
    return CronExpressionParser.parse(cron.trim(), { currentDate: after, tz: timezone }).next().toDate();
  } catch {
    return null;
  }
}

/**
 * `first` (a due time) and the `count - 1` due times after it, as the scheduler will reach them; fewer when the
 * expression runs out, none when it cannot be read.
 */
export function cronTimesFrom(cron: string, timezone: string, first: Date, count: number): Date[] {
  const times = [first];
  try {
    const following = CronExpressionParser.parse(cron.trim(), { currentDate: first, tz: timezone });
    while (times.length < count && following.hasNext()) times.push(following.next().toDate());
  } catch {
    // an expression that ran out (or cannot be read) has no more times
  }
  return times;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** `at` as local time in `timezone`, RFC 3339 with that zone's offset then (`2026-03-29T03:30:00+02:00`). */
export function localTimestamp(at: Date, timezone: string): string | null {
  try {
    let f = formatters.get(timezone);
    if (!f) {
      f = new Intl.DateTimeFormat('en-US', {
        timeZone: timezone,
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
        hourCycle: 'h23',
        timeZoneName: 'longOffset',
      });
      formatters.set(timezone, f);
    }
    const part = Object.fromEntries(f.formatToParts(at).map((p) => [p.type, p.value]));
    const hour = part.hour === '24' ? '00' : part.hour;
    // `GMT+01:00`, `GMT-09:30`, or `GMT` for a zero offset
    const offset = /^GMT([+-]\d{2}:\d{2})$/.exec(part.timeZoneName ?? '')?.[1] ?? '+00:00';
    const ms = at.getUTCMilliseconds();
    const fraction = ms ? `.${String(ms).padStart(3, '0')}` : '';
    return `${part.year}-${part.month}-${part.day}T${hour}:${part.minute}:${part.second}${fraction}${offset}`;
  } catch {
    return null;
  }
}
