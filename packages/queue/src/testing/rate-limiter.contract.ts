import { afterEach, describe, expect, it } from '@jest/globals';
import type { RateLimiter, RateLimits } from '../rate-limit.js';

/**
 * What one implementation hands the contract: two limiters as two API replicas would hold them (same limits, same
 * clock); an in-process limiter passes itself twice.
 */
export interface RateLimiterHarness {
  a: RateLimiter;
  b: RateLimiter;
}

export type MakeRateLimiter = (limits: RateLimits, clock: () => Date) => Promise<RateLimiterHarness>;

const T0 = Date.parse('2030-01-01T00:00:00.000Z');

/** The behaviour every RateLimiter must show, run against each implementation. Time is a test clock. */
export function rateLimiterContract(name: string, make: MakeRateLimiter): void {
  describe(`RateLimiter contract: ${name}`, () => {
    let now = T0;
    const clock = () => new Date(now);
    const open: RateLimiter[] = [];

    async function limiters(limits: RateLimits): Promise<RateLimiterHarness> {
      now = T0;
      const pair = await make(limits, clock);
      open.push(pair.a, pair.b);
      return pair;
    }

    afterEach(async () => {
      for (const l of open.splice(0)) await l.close();
    });

    it('allows the limit within a window and makes the next take wait until the oldest ages out', async () => {
      const { a } = await limiters({ perWindow: 3, windowSeconds: 60 });
      for (let i = 0; i < 3; i++) {
        expect([i, await a.take('alice')]).toEqual([i, 0]);
        now += 1000;
      }
      // Takes at 0 s, 1 s and 2 s; now 3 s: the one at 0 s stops counting at 60 s.
      expect(await a.take('alice')).toBe(57);
      now = T0 + 59_999;
      expect(await a.take('alice')).toBe(1);
      // Exactly one window after it, a take no longer counts: room for one more, then the one at 1 s decides.
      now = T0 + 60_000;
      expect(await a.take('alice')).toBe(0);
      expect(await a.take('alice')).toBe(1);
      now = T0 + 61_000;
      expect(await a.take('alice')).toBe(0);
      expect(await a.take('alice')).toBe(1);
    });

    it('counts nothing for a refused take: retrying early does not push the wait out', async () => {
      const { a } = await limiters({ perWindow: 2, windowSeconds: 10 });
      expect(await a.take('bob')).toBe(0);
      expect(await a.take('bob')).toBe(0);
      for (let s = 1; s < 10; s++) {
        now = T0 + s * 1000;
        expect([s, await a.take('bob')]).toEqual([s, 10 - s]);
      }
      now = T0 + 10_000;
      expect(await a.take('bob')).toBe(0);
      expect(await a.take('bob')).toBe(0);
      expect(await a.take('bob')).toBe(10);
    });

    it('slides: the wait ends with the take that fills the window, not at a fixed boundary', async () => {
      const { a } = await limiters({ perWindow: 2, windowSeconds: 100 });
      for (const at of [0, 40_000]) {
        now = T0 + at;
        expect(await a.take('carol')).toBe(0);
      }
      now = T0 + 90_000;
      expect(await a.take('carol')).toBe(10);
      now = T0 + 100_000;
      expect(await a.take('carol')).toBe(0);
      // Now the takes at 40 s and 100 s count: the wait ends at 140 s.
      now = T0 + 101_500;
      expect(await a.take('carol')).toBe(39);
    });

    it('keeps keys independent, taking them as opaque text', async () => {
      const { a } = await limiters({ perWindow: 1, windowSeconds: 60 });
      const keys = ['dave', 'Dave', 'x:y', 'x', '', ' ', 'Ünïcödé 😀', '*', 'a:b:c'];
      for (const key of keys) expect([key, await a.take(key)]).toEqual([key, 0]);
      for (const key of keys) expect([key, await a.take(key)]).toEqual([key, 60]);
      expect(await a.take('erin')).toBe(0);
    });

    it('answers a Retry-After of at least 1 and at most the window', async () => {
      const { a } = await limiters({ perWindow: 1, windowSeconds: 5 });
      expect(await a.take('frank')).toBe(0);
      for (const at of [0, 1, 999, 1000, 2500, 4000, 4001, 4999]) {
        now = T0 + at;
        const wait = await a.take('frank');
        expect([at, wait >= 1 && wait <= 5 && Number.isInteger(wait)]).toEqual([at, true]);
      }
      now = T0 + 4999;
      expect(await a.take('frank')).toBe(1);
      now = T0;
      expect(await a.take('frank')).toBe(5);
    });

    it('shares one count between replicas', async () => {
      const { a, b } = await limiters({ perWindow: 4, windowSeconds: 60 });
      for (const [i, l] of [a, b, b, a].entries()) {
        expect([i, await l.take('grace')]).toEqual([i, 0]);
        now += 1000;
      }
      expect(await a.take('grace')).toBe(56);
      expect(await b.take('grace')).toBe(56);
      expect(await b.take('heidi')).toBe(0);
    });

    it('lets exactly the limit through when three times as many take at once on both replicas', async () => {
      const { a, b } = await limiters({ perWindow: 7, windowSeconds: 60 });
      const waits = await Promise.all(Array.from({ length: 21 }, (_, i) => (i % 2 ? a : b).take('mallory')));
      expect(waits.filter((w) => w === 0)).toHaveLength(7);
      expect(waits.filter((w) => w === 60)).toHaveLength(14);
      expect(await a.take('mallory')).toBe(60);
    });
  });
}
