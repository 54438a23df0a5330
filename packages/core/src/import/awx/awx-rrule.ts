// AWX schedules are iCalendar rules (`DTSTART;TZID=Zone:20250101T020000 RRULE:FREQ=DAILY;INTERVAL=1`). A Baton
// schedule is a cron expression in a time zone, so only rules that fire at exactly the same times map: no end
// (COUNT, UNTIL), no exceptions (EXRULE, EXDATE, RDATE), intervals that divide their unit, and BYSETPOS never.

export type CronResult = { ok: true; cron: string; timezone: string; note?: string } | { ok: false; reason: string };

const WEEKDAYS: Record<string, number> = { SU: 0, MO: 1, TU: 2, WE: 3, TH: 4, FR: 5, SA: 6 };
const SUPPORTED = new Set(['FREQ', 'INTERVAL', 'BYDAY', 'BYHOUR', 'BYMINUTE', 'BYMONTHDAY', 'BYMONTH', 'WKST']);

interface Start {
  minute: number;
  hour: number;
  day: number;
  month: number;
  weekday: number;
  timezone: string;
  at: Date | undefined;
}

function readStart(line: string): Start | string {
  const m = /^DTSTART(?:;TZID=([^:;]+))?:(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(Z?)$/.exec(line);
  if (!m) return `DTSTART ${line} is not in a form Baton reads`;
  const [, tzid, y, mo, d, h, mi, , z] = m;
  const timezone = tzid ?? 'UTC';
  if (tzid && z) return 'DTSTART gives both a zone and Z';
  const [year, month, day, hour, minute] = [y, mo, d, h, mi].map(Number) as [number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59)
    return `DTSTART ${line} is not a date`;
  const weekday = new Date(Date.UTC(year, month - 1, day)).getUTCDay();
  // The instant only matters for "starts in the future"; in a named zone it is approximate by the zone's offset.
  const at = new Date(Date.UTC(year, month - 1, day, hour, minute));
  return { minute, hour, day, month, weekday, timezone, at };
}

const numbers = (v: string | undefined, lo: number, hi: number): number[] | undefined => {
  if (v === undefined) return undefined;
  const out = v.split(',').map((x) => (/^\d{1,2}$/.test(x) ? Number(x) : NaN));
  return out.every((n) => Number.isInteger(n) && n >= lo && n <= hi) ? out : [];
};

/** The rule as cron in its zone, or why it cannot be one. Never throws. */
export function rruleToCron(rrule: string, now: Date): CronResult {
  const lines = rrule.trim().split(/\s+/);
  const startLine = lines.find((l) => l.startsWith('DTSTART'));
  const ruleLines = lines.filter((l) => l.startsWith('RRULE:'));
  const other = lines.find((l) => !l.startsWith('DTSTART') && !l.startsWith('RRULE:'));
  if (other)
    return { ok: false, reason: `${other.split(/[:;]/)[0]} (exceptions or extra dates) has no cron equivalent` };
  if (!startLine) return { ok: false, reason: 'it has no DTSTART' };
  if (ruleLines.length !== 1)
    return { ok: false, reason: ruleLines.length ? 'it has several RRULEs' : 'it has no RRULE' };
  const start = readStart(startLine);
  if (typeof start === 'string') return { ok: false, reason: start };
  const parts = new Map<string, string>();
  for (const p of ruleLines[0]!.slice('RRULE:'.length).split(';')) {
    const [k, v] = p.split('=');
    if (!k || v === undefined) return { ok: false, reason: `RRULE part ${p} is not NAME=value` };
    parts.set(k.toUpperCase(), v.toUpperCase());
  }
  const unsupported = [...parts.keys()].find((k) => !SUPPORTED.has(k));
  if (unsupported) return { ok: false, reason: `${unsupported} has no cron equivalent` };
  const interval = Number(parts.get('INTERVAL') ?? '1');
  if (!Number.isInteger(interval) || interval < 1) return { ok: false, reason: 'INTERVAL is not a positive integer' };

  const minutes = numbers(parts.get('BYMINUTE'), 0, 59) ?? [start.minute];
  const hours = numbers(parts.get('BYHOUR'), 0, 23) ?? [start.hour];
  const monthDays = numbers(parts.get('BYMONTHDAY'), 1, 31);
  const months = numbers(parts.get('BYMONTH'), 1, 12);
  if (!minutes.length || !hours.length || monthDays?.length === 0 || months?.length === 0)
    return { ok: false, reason: 'a BY list holds values out of range' };
  let weekdays: number[] | undefined;
  const byDay = parts.get('BYDAY');
  if (byDay !== undefined) {
    weekdays = [];
    for (const d of byDay.split(',')) {
      if (!(d in WEEKDAYS)) return { ok: false, reason: `BYDAY ${d} (with a position) has no exact cron equivalent` };
      weekdays.push(WEEKDAYS[d]!);
    }
  }
  const list = (xs: number[]) => xs.join(',');
  const step = (first: number, every: number, top: number) =>
    every === 1 ? '*' : first === 0 ? `*/${every}` : `${first}-${top}/${every}`;
  const freq = parts.get('FREQ') ?? '(none)';
  let cron: string;
  switch (freq) {
    case 'MINUTELY':
      if (60 % interval !== 0 || parts.has('BYMINUTE'))
        return { ok: false, reason: 'a minutely interval must divide 60' };
      cron = `${step(start.minute % interval, interval, 59)} ${parts.has('BYHOUR') ? list(hours) : '*'} * * ${weekdays ? list(weekdays) : '*'}`;
      break;
    case 'HOURLY':
      if (24 % interval !== 0 || parts.has('BYHOUR')) return { ok: false, reason: 'an hourly interval must divide 24' };
      cron = `${list(minutes)} ${step(start.hour % interval, interval, 23)} * * ${weekdays ? list(weekdays) : '*'}`;
      break;
    case 'DAILY':
      if (interval !== 1) return { ok: false, reason: `every ${interval} days drifts across month ends in cron` };
      cron = `${list(minutes)} ${list(hours)} ${monthDays ? list(monthDays) : '*'} ${months ? list(months) : '*'} ${weekdays ? list(weekdays) : '*'}`;
      break;
    case 'WEEKLY':
      if (interval !== 1) return { ok: false, reason: `every ${interval} weeks has no cron equivalent` };
      cron = `${list(minutes)} ${list(hours)} * ${months ? list(months) : '*'} ${list(weekdays ?? [start.weekday])}`;
      break;
    case 'MONTHLY':
      if (12 % interval !== 0) return { ok: false, reason: `every ${interval} months has no cron equivalent` };
      if (weekdays) return { ok: false, reason: 'a monthly rule on weekdays has no exact cron equivalent' };
      {
        // Every `interval` months from the start's month, in every year: those months, listed.
        const every = Array.from({ length: 12 }, (_, i) => i + 1).filter(
          (m) => (m - start.month + 12) % interval === 0,
        );
        if (months && interval !== 1) return { ok: false, reason: 'BYMONTH with an INTERVAL has no cron equivalent' };
        cron = `${list(minutes)} ${list(hours)} ${list(monthDays ?? [start.day])} ${months ? list(months) : interval === 1 ? '*' : list(every)} *`;
      }
      break;
    case 'YEARLY':
      if (interval !== 1 || weekdays) return { ok: false, reason: 'only a plain yearly rule maps to cron' };
      cron = `${list(minutes)} ${list(hours)} ${list(monthDays ?? [start.day])} ${list(months ?? [start.month])} *`;
      break;
    default:
      return { ok: false, reason: `FREQ=${freq} has no cron equivalent` };
  }
  // Both constrained: iCalendar wants both to hold, cron fires when either does.
  if (monthDays && weekdays)
    return { ok: false, reason: 'BYMONTHDAY with BYDAY means "both" in iCalendar, "either" in cron' };
  const future = start.at && start.at.getTime() > now.getTime() + 24 * 3600 * 1000;
  return {
    ok: true,
    cron,
    timezone: start.timezone,
    ...(future ? { note: `it starts on ${startLine.split(':').pop()}; the Baton schedule fires from now on` } : {}),
  };
}
