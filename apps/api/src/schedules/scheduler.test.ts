// The scheduler loop: ticks again and again, never two at once, logs failures and keeps going, and stop() waits for
// the tick in flight.
import { describe, expect, it } from '@jest/globals';
import type { ScheduleFireResult } from '@baton/core';
import { Writable } from 'node:stream';
import { createLogger } from '../logger.js';
import { startScheduler } from './scheduler.js';

async function until(what: string, ok: () => boolean, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function capturingLogger() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { logger: createLogger('debug', { stream }), lines };
}

describe('scheduler loop', () => {
  it('ticks repeatedly, one tick at a time, even when a tick takes longer than the interval', async () => {
    let running = 0;
    let most = 0;
    let ticks = 0;
    const tick = async (): Promise<ScheduleFireResult[]> => {
      running++;
      most = Math.max(most, running);
      ticks++;
      await new Promise((r) => setTimeout(r, 15)); // longer than the 1 ms interval
      running--;
      return [];
    };
    const { logger } = capturingLogger();
    const loop = startScheduler({ scheduler: { tick } }, { logger, intervalMs: 1 });
    await until('five ticks', () => ticks >= 5);
    await loop.stop();
    const after = ticks;
    expect(most).toBe(1);
    await new Promise((r) => setTimeout(r, 30));
    expect(ticks).toBe(after);
  });

  it('stop() resolves only after the tick in flight has finished', async () => {
    let release!: () => void;
    let started = false;
    let finished = false;
    const tick = async (): Promise<ScheduleFireResult[]> => {
      started = true;
      await new Promise<void>((r) => (release = r));
      finished = true;
      return [];
    };
    const { logger } = capturingLogger();
    const loop = startScheduler({ scheduler: { tick } }, { logger, intervalMs: 1 });
    await until('a tick to start', () => started);
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 10));
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(finished).toBe(true);
  });

  it('logs a failing tick and fires that cannot submit, and keeps ticking', async () => {
    let ticks = 0;
    const tick = async (): Promise<ScheduleFireResult[]> => {
      ticks++;
      if (ticks === 1) throw new Error('database away');
      return [
        {
          scheduleId: 'sch_01ARZ3NDEKTSV4RRFFQ69G5FAV',
          dueAt: '2026-01-01T00:00:00.000Z',
          claimed: true,
          runId: null,
          error: 'no grant',
        },
      ];
    };
    const { logger, lines } = capturingLogger();
    const loop = startScheduler({ scheduler: { tick } }, { logger, intervalMs: 1 });
    await until('three ticks', () => ticks >= 3);
    await loop.stop();
    expect(lines.some((l) => l.includes('scheduler tick failed') && l.includes('database away'))).toBe(true);
    expect(lines.some((l) => l.includes('schedule could not fire') && l.includes('no grant'))).toBe(true);
  });

  it('does not keep the process alive and stops before its first tick when asked', async () => {
    let ticks = 0;
    const tick = async (): Promise<ScheduleFireResult[]> => {
      ticks++;
      return [];
    };
    const { logger } = capturingLogger();
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const loop = startScheduler({ scheduler: { tick } }, { logger, intervalMs: 60_000 });
    // An unref'd timer is not counted among the resources that keep the event loop alive.
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBe(before);
    await loop.stop();
    expect(ticks).toBe(0);
  });
});
