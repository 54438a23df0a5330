import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Worker } from '@baton/contracts';
import { DIALECTS } from '@baton/db/testing';
import { z } from 'zod';
import { bearer, createHarness, expectProblem, type Harness } from '../testing/harness.js';

describe.each(DIALECTS)('GET /v1/workers on %s', (dialect) => {
  let h: Harness;

  beforeAll(async () => {
    h = await createHarness(dialect);
  });
  afterAll(async () => {
    await h.services.closeRuns();
    await h.close();
  });

  it('answers an empty array before any executor registered', async () => {
    const res = await h.http.get('/v1/workers').set(bearer(h.admin.token));
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
  });

  it('lists registered executors by name to any signed-in user, in the Worker shape', async () => {
    await h.services.workers.register({
      name: 'executor-2',
      host: 'baton-a',
      mode: 'embedded',
      labels: [],
      capacity: 1,
    });
    await h.services.workers.register({
      name: 'executor-1',
      host: 'baton-a',
      mode: 'embedded',
      labels: ['linux'],
      capacity: 2,
    });
    const leaseExpiresAt = new Date(Date.now() + 30_000);
    await h.services.workers.heartbeat('executor-1', ['run_01ARZ3NDEKTSV4RRFFQ69G5FAV'], leaseExpiresAt);
    const viewer = await h.user('viewer');

    const res = await h.http.get('/v1/workers').set(bearer(viewer.token));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const workers = z.array(Worker).parse(res.body);
    expect(workers.map((w) => w.name)).toEqual(['executor-1', 'executor-2']);
    expect(workers[0]).toMatchObject({
      host: 'baton-a',
      mode: 'embedded',
      labels: ['linux'],
      capacity: 2,
      running: [],
      running_count: 1,
      lease_expires_at: leaseExpiresAt.toISOString(),
      freshness: 'fresh',
    });
    const asAdmin = await h.http.get('/v1/workers').set(bearer(h.admin.token));
    expect(asAdmin.body[0]).toMatchObject({
      name: 'executor-1',
      running: ['run_01ARZ3NDEKTSV4RRFFQ69G5FAV'],
      running_count: 1,
    });
  });

  it('shows each caller the ids of only the running runs they may see, and all of them counted', async () => {
    const op = await h.user('operator');
    const other = await h.user('operator');
    const submit = async (token: string) => {
      const res = await h.http
        .post('/v1/runs')
        .set(bearer(token))
        .send({ playbook: '- hosts: all\n  tasks: []\n', inventory: 'web1\n' });
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    const mine = await submit(op.token);
    const theirs = await submit(other.token);
    await h.services.workers.register({
      name: 'executor-3',
      host: 'baton-b',
      mode: 'embedded',
      labels: [],
      capacity: 2,
    });
    await h.services.workers.heartbeat('executor-3', [mine, theirs], new Date(Date.now() + 30_000));
    const seenBy = async (token: string) =>
      ((await h.http.get('/v1/workers').set(bearer(token))).body as Worker[]).find((w) => w.name === 'executor-3');

    expect(await seenBy(op.token)).toMatchObject({ running: [mine], running_count: 2 });
    expect(await seenBy(other.token)).toMatchObject({ running: [theirs], running_count: 2 });
    expect(await seenBy((await h.user('viewer')).token)).toMatchObject({ running: [], running_count: 2 });
    expect(await seenBy(h.admin.token)).toMatchObject({ running: [mine, theirs], running_count: 2 });
  });

  it('is served without /v1 as a deprecated earlier edition', async () => {
    const res = await h.http.get('/workers').set(bearer(h.admin.token));
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(3);
    expect(res.headers.deprecation).toMatch(/^@\d+$/);
    expect(res.headers.link).toContain('</v1/workers>; rel="successor-version"');
  });

  it('is described in the OpenAPI document, the unprefixed path as deprecated', async () => {
    const doc = (await h.http.get('/v1/openapi.json')).body;
    expect(doc.paths['/v1/workers'].get).toMatchObject({ operationId: 'listWorkers', tags: ['workers'] });
    expect(doc.paths['/v1/workers'].get.deprecated).toBeFalsy();
    expect(doc.paths['/workers'].get.deprecated).toBe(true);
  });

  it('refuses callers who are not signed in', async () => {
    expectProblem(await h.http.get('/v1/workers'), 401);
    expectProblem(await h.http.get('/v1/workers').set({ Authorization: 'Bearer nope' }), 401);
  });
});
