import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, DIALECTS, type TestDatabase } from '@baton/db/testing';
import type { Principal } from '../authz/authorize.js';
import { createWorkerService, freshnessOf, HEARTBEAT_INTERVAL_MS } from './worker.service.js';

const viewer: Principal = { id: 'usr_01ARZ3NDEKTSV4RRFFQ69G5FA3', username: 'viewer', role: 'viewer' };
const T0 = new Date('2025-03-01T12:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);

describe('worker freshness', () => {
  it.each([
    [0, 'fresh'], [15_000, 'fresh'], [15_001, 'stale'], [30_000, 'stale'], [30_001, 'dead'], [-1_000, 'fresh'],
  ])('a heartbeat %i ms ago is %s', (age, expected) => {
    expect(freshnessOf(T0, at(age))).toBe(expected);
  });
});

describe.each(DIALECTS)('worker service on %s', (dialect) => {
  let tdb: TestDatabase;
  let now = T0;
  let service: ReturnType<typeof createWorkerService>;

  beforeAll(async () => {
    tdb = await createTestDatabase(dialect);
    service = createWorkerService({ workers: tdb.db.repos.workers, clock: () => now });
  });
  afterAll(() => tdb.drop());

  it('registers workers, records heartbeats, and lists them by name with their freshness', async () => {
    await service.register({ name: 'zeta-1', host: 'box-b', mode: 'daemon', labels: ['linux', 'eu'], capacity: 4 });
    await service.register({ name: 'alpha-1', host: 'box-a', mode: 'embedded', labels: [], capacity: 2 });
    const [alpha, zeta] = await service.list(viewer);
    expect(alpha).toEqual({
      id: expect.stringMatching(/^wrk_[0-9A-Z]{26}$/), name: 'alpha-1', host: 'box-a', mode: 'embedded', labels: [], capacity: 2, running: [],
      started_at: T0.toISOString(), last_heartbeat: T0.toISOString(), lease_expires_at: at(30_000).toISOString(), freshness: 'fresh',
    });
    expect(zeta).toMatchObject({ name: 'zeta-1', mode: 'daemon', labels: ['linux', 'eu'], capacity: 4 });

    now = at(HEARTBEAT_INTERVAL_MS);
    await service.heartbeat('alpha-1', ['run_01ARZ3NDEKTSV4RRFFQ69G5FAV'], at(35_000));
    now = at(18_000); // alpha beat 13 s ago, zeta 18 s ago
    const listed = await service.list(viewer);
    expect(listed.map((w) => [w.name, w.freshness])).toEqual([['alpha-1', 'fresh'], ['zeta-1', 'stale']]);
    expect(listed[0]).toMatchObject({ running: ['run_01ARZ3NDEKTSV4RRFFQ69G5FAV'], last_heartbeat: at(5_000).toISOString(), lease_expires_at: at(35_000).toISOString() });
    now = at(40_000);
    expect((await service.list(viewer)).map((w) => w.freshness)).toEqual(['dead', 'dead']);
  });

  it('lets a restarted worker take its row over: new id and start time, nothing running', async () => {
    const before = (await service.list(viewer)).find((w) => w.name === 'alpha-1')!;
    now = at(60_000);
    await service.register({ name: 'alpha-1', host: 'box-c', mode: 'embedded', labels: ['x'], capacity: 3 });
    const after = (await service.list(viewer)).filter((w) => w.name === 'alpha-1');
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ host: 'box-c', labels: ['x'], capacity: 3, running: [], started_at: now.toISOString(), freshness: 'fresh' });
    expect(after[0]!.id).not.toBe(before.id);
  });

  it('ignores a heartbeat of an unknown worker', async () => {
    await service.heartbeat('ghost', [], at(90_000));
    expect((await service.list(viewer)).map((w) => w.name)).toEqual(['alpha-1', 'zeta-1']);
  });
});
