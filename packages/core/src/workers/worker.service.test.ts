import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RunRow } from '@baton/db';
import { createTestDatabase, DIALECTS, type TestDatabase, testRunRow } from '@baton/db/testing';
import { createAuthorizer, type Principal } from '../authz/authorize.js';
import { newId } from '../common/ids.js';
import { createRunAccess } from '../runs/run-access.js';
import {
  createWorkerService,
  type DaemonBeat,
  embeddedWorkerName,
  freshnessOf,
  HEARTBEAT_INTERVAL_MS,
  parseEmbeddedWorkerName,
} from './worker.service.js';

const viewer: Principal = { id: 'usr_01ARZ3NDEKTSV4RRFFQ69G5FA3', username: 'viewer', role: 'viewer' };
const admin: Principal = { id: 'usr_01ARZ3NDEKTSV4RRFFQ69G5FA4', username: 'admin', role: 'admin' };
const T0 = new Date('2025-03-01T12:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);

describe('worker freshness', () => {
  it.each([
    [0, 'fresh'],
    [15_000, 'fresh'],
    [15_001, 'stale'],
    [30_000, 'stale'],
    [30_001, 'dead'],
    [-1_000, 'fresh'],
  ])('a heartbeat %i ms ago is %s', (age, expected) => {
    expect(freshnessOf(T0, at(age))).toBe(expected);
  });
});

describe('embedded worker names', () => {
  it('carry the host and the pid, so each `baton serve` process has its own', () => {
    expect(embeddedWorkerName('box-a', 4242)).toBe('box-a/embedded/4242');
    expect(parseEmbeddedWorkerName('box-a/embedded/4242')).toEqual({ hostname: 'box-a', pid: 4242 });
    expect(parseEmbeddedWorkerName('a/b/embedded/7')).toEqual({ hostname: 'a/b', pid: 7 });
  });

  it.each([
    'box-a/embedded',
    'box-a/embedded/',
    'box-a/embedded/0',
    'box-a/embedded/-1',
    'box-a/embedded/12x',
    '/embedded/5',
    'daemon-1',
    'box-a/embedded/12345678901',
  ])('are not read from %p', (name) => expect(parseEmbeddedWorkerName(name)).toBeUndefined());
});

describe.each(DIALECTS)('worker service on %s', (dialect) => {
  let tdb: TestDatabase;
  let now = T0;
  let service: ReturnType<typeof createWorkerService>;

  beforeAll(async () => {
    tdb = await createTestDatabase(dialect);
    const { repos } = tdb.db;
    service = createWorkerService({
      workers: repos.workers,
      runs: repos.runs,
      access: createRunAccess({
        runs: repos.runs,
        authz: createAuthorizer({ grants: repos.grants, teams: repos.teams }),
        teams: repos.teams,
      }),
      clock: () => now,
    });
  });
  afterAll(() => tdb.drop());

  it('registers workers, records heartbeats, and lists them by name with their freshness', async () => {
    await service.register({ name: 'zeta-1', host: 'box-b', mode: 'daemon', labels: ['linux', 'eu'], capacity: 4 });
    await service.register({ name: 'alpha-1', host: 'box-a', mode: 'embedded', labels: [], capacity: 2 });
    const [alpha, zeta] = await service.list(viewer);
    expect(alpha).toEqual({
      id: expect.stringMatching(/^wrk_[0-9A-Z]{26}$/),
      name: 'alpha-1',
      host: 'box-a',
      mode: 'embedded',
      labels: [],
      capacity: 2,
      running: [],
      running_count: 0,
      started_at: T0.toISOString(),
      last_heartbeat: T0.toISOString(),
      lease_expires_at: at(30_000).toISOString(),
      freshness: 'fresh',
      paused: null,
    });
    expect(zeta).toMatchObject({ name: 'zeta-1', mode: 'daemon', labels: ['linux', 'eu'], capacity: 4 });

    now = at(HEARTBEAT_INTERVAL_MS);
    await service.heartbeat('alpha-1', ['run_01ARZ3NDEKTSV4RRFFQ69G5FAV'], at(35_000));
    now = at(18_000); // alpha beat 13 s ago, zeta 18 s ago
    const listed = await service.list(viewer);
    expect(listed.map((w) => [w.name, w.freshness])).toEqual([
      ['alpha-1', 'fresh'],
      ['zeta-1', 'stale'],
    ]);
    expect(listed[0]).toMatchObject({
      running: [],
      running_count: 1,
      last_heartbeat: at(5_000).toISOString(),
      lease_expires_at: at(35_000).toISOString(),
    });
    now = at(40_000);
    expect((await service.list(viewer)).map((w) => w.freshness)).toEqual(['dead', 'dead']);
  });

  it('lets a restarted worker take its row over: new id and start time, nothing running', async () => {
    const before = (await service.list(viewer)).find((w) => w.name === 'alpha-1')!;
    now = at(60_000);
    await service.register({ name: 'alpha-1', host: 'box-c', mode: 'embedded', labels: ['x'], capacity: 3 });
    const after = (await service.list(viewer)).filter((w) => w.name === 'alpha-1');
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({
      host: 'box-c',
      labels: ['x'],
      capacity: 3,
      running: [],
      started_at: now.toISOString(),
      freshness: 'fresh',
    });
    expect(after[0]!.id).not.toBe(before.id);
  });

  it('mirrors daemon heartbeats read from Redis: newer beats only, a stable id per start, a new one after a restart', async () => {
    now = at(100_000);
    const beat = (over: Partial<DaemonBeat> = {}): DaemonBeat => ({
      name: 'daemon-1',
      host: 'box-d',
      labels: ['gpu'],
      capacity: 3,
      running: ['run_01ARZ3NDEKTSV4RRFFQ69G5FAV'],
      started_at: at(90_000).toISOString(),
      last_heartbeat: at(99_000).toISOString(),
      lease_expires_at: at(129_000).toISOString(),
      ...over,
    });
    await service.mirror([beat()]);
    const first = (await service.list(admin)).find((w) => w.name === 'daemon-1')!;
    expect(first).toMatchObject({
      mode: 'daemon',
      host: 'box-d',
      labels: ['gpu'],
      capacity: 3,
      running: ['run_01ARZ3NDEKTSV4RRFFQ69G5FAV'],
      last_heartbeat: at(99_000).toISOString(),
      freshness: 'fresh',
      paused: null,
    });

    // Another replica mirrors an older read: nothing moves back. A newer beat keeps the id.
    await service.mirror([beat({ last_heartbeat: at(94_000).toISOString(), running: [] })]);
    await service.mirror([beat({ last_heartbeat: at(104_000).toISOString(), running: [], lease_expires_at: null })]);
    const second = (await service.list(admin)).find((w) => w.name === 'daemon-1')!;
    expect(second).toMatchObject({
      id: first.id,
      running: [],
      last_heartbeat: at(104_000).toISOString(),
      lease_expires_at: at(104_000).toISOString(),
    });

    // A daemon silent for more than a day is not brought back.
    await service.mirror([
      beat({ name: 'daemon-gone', last_heartbeat: new Date(now.getTime() - 25 * 3600_000).toISOString() }),
    ]);
    expect((await service.list(admin)).map((w) => w.name)).not.toContain('daemon-gone');

    await service.mirror([beat({ started_at: at(110_000).toISOString(), last_heartbeat: at(111_000).toISOString() })]);
    const third = (await service.list(admin)).find((w) => w.name === 'daemon-1')!;
    expect(third.id).not.toBe(first.id);
    expect(third.started_at).toBe(at(110_000).toISOString());
  });

  it("mirrors a daemon's pause (its event buffer full) and its end once a later beat leases again", async () => {
    now = at(200_000);
    const beat = (over: Partial<DaemonBeat> = {}): DaemonBeat => ({
      name: 'daemon-paused',
      host: 'box-p',
      labels: [],
      capacity: 1,
      running: [],
      started_at: at(190_000).toISOString(),
      last_heartbeat: at(199_000).toISOString(),
      lease_expires_at: null,
      ...over,
    });
    const paused = async () => (await service.list(viewer)).find((w) => w.name === 'daemon-paused')!.paused;
    await service.mirror([beat({ paused: 'event_buffer_full' })]);
    expect(await paused()).toBe('event_buffer_full');
    // An older read of the same daemon (from before the pause) changes nothing.
    await service.mirror([beat({ last_heartbeat: at(198_000).toISOString() })]);
    expect(await paused()).toBe('event_buffer_full');
    await service.mirror([beat({ last_heartbeat: at(204_000).toISOString() })]);
    expect(await paused()).toBeNull();
  });

  it('ignores a heartbeat of an unknown worker', async () => {
    await service.heartbeat('ghost', [], at(90_000));
    expect((await service.list(viewer)).map((w) => w.name)).toEqual(['alpha-1', 'daemon-1', 'daemon-paused', 'zeta-1']);
  });

  it('shows a non-admin only the ids of running runs they may see, and everyone how many there are', async () => {
    const submitter: Principal = { id: newId('usr'), username: 'op', role: 'operator' };
    const admin: Principal = { id: newId('usr'), username: 'root', role: 'admin' };
    const runOf = async (submittedBy: string) => {
      const id = newId('run');
      await tdb.db.repos.runs.insert(runRow(id, submittedBy));
      return id;
    };
    const own = await runOf(submitter.id);
    const others = await runOf(newId('usr'));
    await service.register({ name: 'busy-1', host: 'box-d', mode: 'embedded', labels: [], capacity: 3 });
    // A run id that names no run (deleted since, or never stored) is nobody's to see but an admin's.
    const ghost = newId('run');
    await service.heartbeat('busy-1', [others, own, ghost], at(120_000));
    const busy = async (p: Principal) => (await service.list(p)).find((w) => w.name === 'busy-1')!;

    expect(await busy(submitter)).toMatchObject({ running: [own], running_count: 3 });
    expect(await busy(viewer)).toMatchObject({ running: [], running_count: 3 });
    expect(await busy(admin)).toMatchObject({ running: [others, own, ghost], running_count: 3 });
  });
});

const runRow = (id: string, submittedBy: string): RunRow =>
  testRunRow(id, { status: 'running', submitted_by: submittedBy, worker: 'busy-1', created_at: T0.toISOString() });
