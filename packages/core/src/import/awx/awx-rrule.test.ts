import { describe, expect, it } from '@jest/globals';
import { rruleToCron } from './awx-rrule.js';

const NOW = new Date('2026-11-26T00:00:00Z');
const cron = (rule: string) => rruleToCron(rule, NOW);

describe('rruleToCron', () => {
  it.each([
    ['DTSTART;TZID=Europe/Berlin:20250101T020000 RRULE:FREQ=DAILY;INTERVAL=1', '0 2 * * *', 'Europe/Berlin'],
    ['DTSTART:20240701T000000Z RRULE:FREQ=WEEKLY;INTERVAL=1;BYDAY=SU', '0 0 * * 0', 'UTC'],
    ['DTSTART:20240703T063000Z RRULE:FREQ=WEEKLY', '30 6 * * 3', 'UTC'],
    ['DTSTART:20240701T001500Z RRULE:FREQ=MINUTELY;INTERVAL=15', '*/15 * * * *', 'UTC'],
    ['DTSTART:20240701T002000Z RRULE:FREQ=MINUTELY;INTERVAL=15', '5-59/15 * * * *', 'UTC'],
    ['DTSTART:20240701T011000Z RRULE:FREQ=HOURLY;INTERVAL=6', '10 1-23/6 * * *', 'UTC'],
    ['DTSTART:20240701T000500Z RRULE:FREQ=HOURLY', '5 * * * *', 'UTC'],
    ['DTSTART:20240115T030000Z RRULE:FREQ=MONTHLY;BYMONTHDAY=1,15', '0 3 1,15 * *', 'UTC'],
    ['DTSTART:20240215T030000Z RRULE:FREQ=MONTHLY;INTERVAL=3', '0 3 15 2,5,8,11 *', 'UTC'],
    ['DTSTART:20240704T090000Z RRULE:FREQ=YEARLY', '0 9 4 7 *', 'UTC'],
    [
      'DTSTART;TZID=America/New_York:20240101T080000 RRULE:FREQ=DAILY;BYHOUR=8,17;BYMINUTE=0',
      '0 8,17 * * *',
      'America/New_York',
    ],
  ])('%s → %s', (rule, expected, timezone) => {
    expect(cron(rule)).toEqual({ ok: true, cron: expected, timezone });
  });

  it.each([
    ['DTSTART:20240701T000000Z RRULE:FREQ=DAILY;INTERVAL=2', 'drifts'],
    ['DTSTART:20240701T000000Z RRULE:FREQ=DAILY;COUNT=5', 'COUNT'],
    ['DTSTART:20240701T000000Z RRULE:FREQ=DAILY;UNTIL=20250101T000000Z', 'UNTIL'],
    ['DTSTART:20240701T000000Z RRULE:FREQ=MONTHLY;BYDAY=FR;BYSETPOS=-1', 'BYSETPOS'],
    ['DTSTART:20240701T000000Z RRULE:FREQ=MONTHLY;BYDAY=1MO', 'position'],
    ['DTSTART:20240701T000000Z RRULE:FREQ=WEEKLY;INTERVAL=2', 'weeks'],
    ['DTSTART:20240701T000000Z RRULE:FREQ=MINUTELY;INTERVAL=7', 'divide 60'],
    ['DTSTART:20240701T000000Z RRULE:FREQ=DAILY EXRULE:FREQ=WEEKLY;BYDAY=SA', 'EXRULE'],
    ['RRULE:FREQ=DAILY', 'DTSTART'],
    ['DTSTART:2024-07-01 RRULE:FREQ=DAILY', 'not in a form'],
    ['DTSTART:20241301T000000Z RRULE:FREQ=DAILY', 'not a date'],
    ['DTSTART:20240701T000000Z RRULE:FREQ=SECONDLY', 'SECONDLY'],
    ['', 'DTSTART'],
  ])('%s does not map (%s)', (rule, why) => {
    const r = cron(rule);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain(why);
  });

  it('notes a rule that starts later than now, since cron starts at once', () => {
    const r = cron('DTSTART:20270101T000000Z RRULE:FREQ=DAILY');
    expect(r).toMatchObject({ ok: true, cron: '0 0 * * *', note: expect.stringContaining('20270101T000000Z') });
  });
});
