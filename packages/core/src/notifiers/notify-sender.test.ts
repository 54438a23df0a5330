import { describe, expect, it } from '@jest/globals';
import { backoffMs, matches, runEventOf } from './notify-sender.js';

describe('runEventOf', () => {
  it.each([
    ['running', null, 'run.started'],
    ['held', null, 'run.held'],
    ['finished', 'succeeded', 'run.succeeded'],
    ['finished', 'failed', 'run.failed'],
    ['finished', 'error', 'run.failed'],
    ['finished', 'canceled', 'run.canceled'],
    ['finished', 'rejected', 'run.canceled'],
    ['finished', 'skipped', undefined],
    ['pending', null, undefined],
  ])('%s/%s → %s', (status, conclusion, event) => {
    expect(runEventOf(status, conclusion)).toBe(event);
  });
});

describe('matches', () => {
  const run = { template_id: 'tpl_1', project_id: 'prj_1', schedule_id: null, trigger_id: null, origin: 'template' };
  it('holds for every run without a match, and when every given field holds', () => {
    expect(matches(null, run)).toBe(true);
    expect(matches({ templates: ['tpl_1'], origins: ['template', 'api'] }, run)).toBe(true);
  });
  it('fails when any given field fails, also on a missing value', () => {
    expect(matches({ templates: ['tpl_2'] }, run)).toBe(false);
    expect(matches({ templates: ['tpl_1'], projects: ['prj_2'] }, run)).toBe(false);
    expect(matches({ schedules: ['sch_1'] }, run)).toBe(false);
  });
});

describe('backoffMs', () => {
  it('doubles from 30 s and stops growing at an hour', () => {
    expect([1, 2, 3, 4].map(backoffMs)).toEqual([30_000, 60_000, 120_000, 240_000]);
    expect(backoffMs(20)).toBe(3_600_000);
  });
});
