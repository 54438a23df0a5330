// Cron in words (cronstrue) and due times shown in a schedule's own zone. The due times themselves always come from
// the server (`next_runs`, computed by the cron-parser the scheduler fires with), never from the browser.
import cronstrue from 'cronstrue';

/** The expression in words, or why it cannot be read (the server's check is the one that counts). */
export function describeCron(expr: string): { words?: string; problem?: string } {
  const fields = expr.trim().split(/\s+/).filter(Boolean);
  if (!fields.length) return {};
  if (fields.length !== 5 && fields.length !== 6)
    return {
      problem: `5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first), not ${fields.length}`,
    };
  try {
    return { words: cronstrue.toString(expr.trim(), { use24HourTimeFormat: true, verbose: true }) };
  } catch (err) {
    return { problem: String(err).replace(/^Error:\s*/, '') };
  }
}

/** Every IANA zone the browser knows, UTC first. */
export function timeZones(): string[] {
  const zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return ['UTC', ...zones.filter((z) => z !== 'UTC')];
}

/** An instant as wall-clock time in `zone`, with the zone's offset then: "Mon, 2 Mar 2026, 02:30:00 GMT+1". */
export function inZone(at: string, zone: string): string {
  try {
    return new Intl.DateTimeFormat(undefined, {
      timeZone: zone,
      weekday: 'short',
      year: 'numeric',
      month: 'short',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'short',
    }).format(new Date(at));
  } catch {
    return at;
  }
}

/** The next due times, each in the schedule's zone (and UTC in the tooltip). */
export function NextTimes({ times, zone }: { times: string[]; zone: string }) {
  if (!times.length) return <span className="muted">none (disabled)</span>;
  return (
    <ol className="times-list" aria-label={`Next ${times.length} times in ${zone}`} data-testid="next-times">
      {times.map((t) => (
        <li key={t}>
          <time dateTime={t} title={t}>
            {inZone(t, zone)}
          </time>
        </li>
      ))}
    </ol>
  );
}
