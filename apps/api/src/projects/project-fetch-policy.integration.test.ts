// BATON_FETCH_DENY_PRIVATE through the API, on SQLite and PostgreSQL: a project on a local (file://), loopback or
// private git remote is refused with a 400 at body.git_url before anything is stored.
// Without the setting the same file:// project is accepted.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DIALECTS } from '@baton/db/testing';
import { createRepo, tempDir } from '@baton/executor/testing';
import { bearer, createHarness, expectProblem, type Harness } from '../testing/harness.js';

describe.each(DIALECTS)('BATON_FETCH_DENY_PRIVATE on %s', (dialect) => {
  const root = tempDir(`baton-deny-${dialect}`);
  let denying: Harness;
  let allowing: Harness;
  let repo: ReturnType<typeof createRepo>;

  beforeAll(async () => {
    denying = await createHarness(dialect, { fetchDenyPrivate: true });
    allowing = await createHarness(dialect);
    repo = createRepo(root);
  });
  afterAll(async () => {
    await denying?.close();
    await allowing?.close();
  });

  it('refuses local, loopback and private git remotes with a 400 at body.git_url, storing nothing', async () => {
    const auth = bearer(denying.admin.token);
    for (const [url, reason] of [
      [repo.url, /file:\/\/ repositories are local/],
      ['https://127.0.0.1:9/ops.git', /127\.0\.0\.1 is a loopback or private address/],
      ['ssh://git@10.20.30.40/ops.git', /10\.20\.30\.40 is a loopback or private address/],
      ['git@192.168.7.7:ops.git', /192\.168\.7\.7/],
    ] as const) {
      const res = await denying.http
        .post('/v1/projects')
        .set(auth)
        .send({ name: `p ${url}`, git_url: url });
      expectProblem(res, 400, 'body.git_url');
      expect(res.body.detail).toMatch(reason);
    }
    expect((await denying.http.get('/v1/projects').set(auth)).body).toEqual([]);
    const allowed = await allowing.http
      .post('/v1/projects')
      .set(bearer(allowing.admin.token))
      .send({ name: 'local', git_url: repo.url });
    expect(allowed.status).toBe(201);
  });
});
