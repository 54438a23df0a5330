import { afterEach, describe, expect, it } from '@jest/globals';
import type { LoginThrottle, LoginThrottleLimits } from '../login-throttle.js';

/**
 * What one implementation hands the contract: two throttles as two API replicas would hold them (same limits,
 * same clock); an in-process throttle passes itself twice.
 */
export interface LoginThrottleHarness {
  a: LoginThrottle;
  b: LoginThrottle;
}

export type MakeLoginThrottle = (limits: LoginThrottleLimits, clock: () => Date) => Promise<LoginThrottleHarness>;

const T0 = Date.parse('2030-01-01T00:00:00.000Z');

/** The behaviour every LoginThrottle must show, run against each implementation. Time is a test clock. */
export function loginThrottleContract(name: string, make: MakeLoginThrottle): void {
  describe(`LoginThrottle contract: ${name}`, () => {
    let now = T0;
    const clock = () => new Date(now);
    const open: LoginThrottle[] = [];

    async function throttles(limits: LoginThrottleLimits): Promise<LoginThrottleHarness> {
      now = T0;
      const pair = await make(limits, clock);
      open.push(pair.a, pair.b);
      return pair;
    }

    afterEach(async () => {
      for (const t of open.splice(0)) await t.close();
    });

    it('blocks a username after its failures, on either replica, until the window slides past', async () => {
      const { a, b } = await throttles({ perUsername: 3, perAddress: 100, windowSeconds: 60 });
      for (const [i, t] of [a, b, a].entries()) {
        expect([i, await t.retryAfter('alice', '10.0.0.1')]).toEqual([i, 0]);
        await t.recordFailure('alice', '10.0.0.1');
        now += 1000;
      }
      // Failures at 0 s, 1 s and 2 s; now 3 s: the one at 0 s stops counting at 60 s.
      expect(await b.retryAfter('alice', '10.0.0.2')).toBe(57);
      expect(await a.retryAfter('alice', '10.0.0.2')).toBe(57);
      expect(await b.retryAfter('ALICE', '10.0.0.2')).toBe(57);
      expect(await b.retryAfter('bob', '10.0.0.1')).toBe(0);
      now = T0 + 59_999;
      expect(await a.retryAfter('alice', '10.0.0.2')).toBe(1);
      // Exactly one window after it, a failure no longer counts.
      now = T0 + 60_000;
      expect(await a.retryAfter('alice', '10.0.0.2')).toBe(0);
      expect(await b.retryAfter('alice', '10.0.0.2')).toBe(0);
      // One more failure fills the window again: the next to age out is the one at 1 s.
      await b.recordFailure('alice', '10.0.0.2');
      expect(await a.retryAfter('alice', '10.0.0.3')).toBe(1);
    });

    it('waits for the oldest failure that still decides, not the newest', async () => {
      const { a, b } = await throttles({ perUsername: 2, perAddress: 100, windowSeconds: 100 });
      for (const at of [0, 10_000, 20_000, 30_000]) {
        now = T0 + at;
        await (at % 20_000 ? b : a).recordFailure('dave', '10.0.0.1');
      }
      now = T0 + 35_000;
      // Four failures count; two are allowed: the wait ends when the third newest (at 20 s) leaves, at 120 s.
      expect(await a.retryAfter('dave', '10.0.0.9')).toBe(85);
      now = T0 + 110_000;
      expect(await b.retryAfter('dave', '10.0.0.9')).toBe(10);
      // Then only the one at 30 s counts: under the limit.
      now = T0 + 120_000;
      expect(await b.retryAfter('dave', '10.0.0.9')).toBe(0);
    });

    it('blocks an address that sprays many usernames, and only that address', async () => {
      const { a, b } = await throttles({ perUsername: 3, perAddress: 5, windowSeconds: 60 });
      for (let i = 0; i < 5; i++) await (i % 2 ? a : b).recordFailure(`user${i}`, '10.0.0.9');
      expect(await a.retryAfter('someone-new', '10.0.0.9')).toBe(60);
      expect(await b.retryAfter('someone-new', '10.0.0.9')).toBe(60);
      expect(await b.retryAfter('someone-new', '10.0.0.10')).toBe(0);
      expect(await a.retryAfter('user0', '10.0.0.10')).toBe(0);
    });

    it('forgets a username’s failures after a successful sign-in, but not the address’s', async () => {
      const { a, b } = await throttles({ perUsername: 3, perAddress: 4, windowSeconds: 60 });
      await a.recordFailure('carol', 'addr-1');
      await b.recordFailure('Carol', 'addr-1');
      await a.recordFailure('carol', 'addr-1');
      expect(await b.retryAfter('carol', 'addr-2')).toBe(60);
      await b.recordSuccess('CAROL');
      expect(await a.retryAfter('carol', 'addr-2')).toBe(0);
      await a.recordFailure('carol', 'addr-2');
      await b.recordFailure('carol', 'addr-2');
      expect(await a.retryAfter('carol', 'addr-2')).toBe(0);
      // addr-1 still holds its three failures; a fourth from anyone blocks it.
      await b.recordFailure('erin', 'addr-1');
      expect(await a.retryAfter('frank', 'addr-1')).toBe(60);
    });

    it('counts every failure recorded at the same moment on both replicas', async () => {
      const { a, b } = await throttles({ perUsername: 40, perAddress: 1000, windowSeconds: 60 });
      await Promise.all(Array.from({ length: 39 }, (_, i) => (i % 2 ? a : b).recordFailure('grace', `10.0.1.${i}`)));
      expect(await a.retryAfter('grace', '10.0.2.1')).toBe(0);
      await b.recordFailure('grace', '10.0.2.1');
      expect(await a.retryAfter('grace', '10.0.2.1')).toBe(60);
    });

    it('lets no more sign-ins past begin than the limit, however many run at once on both replicas', async () => {
      const { a, b } = await throttles({ perUsername: 5, perAddress: 1000, windowSeconds: 60 });
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).begin('mallory', `10.0.3.${i}`)),
      );
      const through = answers.filter((x) => x.retryAfter === 0);
      expect(through).toHaveLength(5);
      for (const x of through) expect(x.attempt).toEqual(expect.any(String));
      expect(new Set(through.map((x) => x.attempt)).size).toBe(5);
      expect(answers.filter((x) => x.retryAfter === 60 && x.attempt === undefined)).toHaveLength(25);
      expect(await a.retryAfter('mallory', '10.0.4.1')).toBe(60);
    });

    it('counts a begun sign-in as a failure until it succeeds, and a refused one not at all', async () => {
      const { a, b } = await throttles({ perUsername: 2, perAddress: 2, windowSeconds: 60 });
      const first = await a.begin('nina', 'shared-nat');
      now += 1000;
      const second = await b.begin('oscar', 'shared-nat');
      expect([first.retryAfter, second.retryAfter]).toEqual([0, 0]);
      // Both in flight count against the address: a third is refused until one ends.
      expect(await a.begin('peggy', 'shared-nat')).toEqual({ retryAfter: 59 });
      // Nina's password was right: her sign-in no longer counts against the address, Oscar's (wrong) still does.
      await b.recordSuccess('NINA', { address: 'shared-nat', attempt: first.attempt! });
      const third = await a.begin('peggy', 'shared-nat');
      expect(third.retryAfter).toBe(0);
      expect(await b.begin('quentin', 'shared-nat')).toEqual({ retryAfter: 60 });
      now = T0 + 30_000;
      expect(await b.begin('sybil', 'shared-nat')).toEqual({ retryAfter: 31 });
      expect(await a.begin('trent', 'shared-nat')).toEqual({ retryAfter: 31 });
      // Oscar's and Peggy's counted failures (at 1 s) age out at 61 s; the refused begins (at 30 s) added nothing.
      now = T0 + 61_000;
      expect((await a.begin('quentin', 'shared-nat')).retryAfter).toBe(0);
      // Per username too: two begun and never succeeded, then the username is at its limit on both replicas.
      expect((await a.begin('rita', 'r1')).retryAfter).toBe(0);
      expect((await b.begin('Rita', 'r2')).retryAfter).toBe(0);
      expect(await a.begin('rita', 'r3')).toEqual({ retryAfter: 60 });
      expect(await b.retryAfter('RITA', 'r4')).toBe(60);
    });

    it('takes usernames and addresses as opaque text', async () => {
      const { a, b } = await throttles({ perUsername: 1, perAddress: 1, windowSeconds: 60 });
      const odd = ['x:y', 'u:x', 'a:b', 'Ünïcödé 😀', '*', ' ', ''];
      await a.recordFailure('x:y', '::ffff:127.0.0.1');
      for (const u of odd.slice(1)) expect([u, await b.retryAfter(u, '::1')]).toEqual([u, 0]);
      expect(await b.retryAfter('x:y', '::1')).toBe(60);
      expect(await b.retryAfter('nobody', '::ffff:127.0.0.1')).toBe(60);
      expect(await a.retryAfter('nobody', '::ffff:127.0.0.2')).toBe(0);
    });
  });
}
