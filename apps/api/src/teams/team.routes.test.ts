import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DIALECTS } from '@baton/db/testing';
import type { Response } from 'supertest';
import { bearer, createHarness, type Harness, expectProblem } from '../testing/harness.js';

const UNKNOWN_TEAM = 'team_01ARZ3NDEKTSV4RRFFQ69G5FAV';
const UNKNOWN_USER = 'usr_01ARZ3NDEKTSV4RRFFQ69G5FAV';
let seq = 0;
const teamName = (stem = 'team') => `${stem} ${++seq} ${Date.now().toString(36)}`;

const ids = (res: Response) => (res.body as Array<{ id: string }>).map((x) => x.id);

describe.each(DIALECTS)('teams on %s', (dialect) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(dialect);
  });
  afterAll(() => h.close());

  const createTeam = async (token: string, name = teamName()) => {
    const res = await h.http.post('/v1/teams').set(bearer(token)).send({ name });
    expect(res.status).toBe(201);
    return { id: res.body.id as string, name, res };
  };
  const addMember = (token: string, teamId: string, userId: string) =>
    h.http.post(`/v1/teams/${teamId}/members`).set(bearer(token)).send({ user_id: userId });
  const grantsOn = async (object: string) =>
    (await h.http.get(`/v1/grants?object=${object}`).set(bearer(h.admin.token))).body as Array<Record<string, string>>;

  it('refuses a viewer creating a team (403) and anyone without a token (401)', async () => {
    const viewer = await h.user('viewer');
    const name = teamName('viewers');
    expectProblem(await h.http.post('/v1/teams').set(bearer(viewer.token)).send({ name }), 403);
    expectProblem(await h.http.post('/v1/teams').send({ name }), 401);
    expectProblem(await h.http.get('/v1/teams'), 401);
    const all = await h.http.get('/v1/teams?limit=500').set(bearer(h.admin.token));
    expect(all.body.map((t: { name: string }) => t.name)).not.toContain(name);
  });

  it('lets an operator create a team: 201, Location, and a visible manage grant for the creator', async () => {
    const op = await h.user('operator');
    const t = await createTeam(op.token, teamName('ops'));
    expect(t.res.headers.location).toBe(`/v1/teams/${t.id}`);
    expect(t.res.body).toEqual({ id: t.id, name: t.name, created_at: expect.any(String), created_by: op.id });
    expect(t.id).toMatch(/^team_[0-9A-HJKMNP-TV-Z]{26}$/);
    const own = await h.http.get(`/v1/grants?object=${t.id}`).set(bearer(op.token));
    expect(own.status).toBe(200);
    expect(own.body).toEqual([
      expect.objectContaining({ subject: op.id, object: t.id, level: 'manage', created_by: op.id }),
    ]);
    const viewer = await h.user('viewer');
    const fetched = await h.http.get(t.res.headers.location as string).set(bearer(viewer.token));
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(t.res.body);
  });

  it('lets an admin create a team too', async () => {
    const t = await createTeam(h.admin.token);
    expect(t.res.body.created_by).toBe(h.admin.id);
    expect(await grantsOn(t.id)).toEqual([expect.objectContaining({ subject: h.admin.id, level: 'manage' })]);
  });

  it('lists teams newest first to any signed-in user and pages with ?limit=1 and the Link header', async () => {
    const op = await h.user('operator');
    const older = await createTeam(op.token);
    // Ids order by millisecond: signing a user in between keeps the two teams apart in time.
    const viewer = await h.user('viewer');
    const newer = await createTeam(op.token);
    const all = await h.http.get('/v1/teams').set(bearer(viewer.token));
    expect(all.status).toBe(200);
    expect(ids(all).slice(0, 2)).toEqual([newer.id, older.id]);
    const first = await h.http.get('/v1/teams?limit=1').set(bearer(viewer.token));
    expect(ids(first)).toEqual([newer.id]);
    const link = /^<([^>]+)>; rel="next"$/.exec(first.headers.link as string);
    expect(link).not.toBeNull();
    const second = await h.http.get(link![1]!).set(bearer(viewer.token));
    expect(second.status).toBe(200);
    expect(ids(second)).toEqual([older.id]);
    expectProblem(await h.http.get('/v1/teams?cursor=%25%25').set(bearer(viewer.token)), 400);
    expectProblem(await h.http.get('/v1/teams?limit=0').set(bearer(viewer.token)), 400, 'query.limit');
  });

  it('answers 409 for a duplicate name, also after trimming, and keeps the first team', async () => {
    const op = await h.user('operator');
    const t = await createTeam(op.token);
    const dup = await h.http.post('/v1/teams').set(bearer(h.admin.token)).send({ name: t.name });
    expectProblem(dup, 409);
    expect(dup.body.detail).toContain(t.name);
    expectProblem(
      await h.http
        .post('/v1/teams')
        .set(bearer(op.token))
        .send({ name: `  ${t.name}  ` }),
      409,
    );
    const same = (await h.http.get('/v1/teams?limit=500').set(bearer(op.token))).body.filter(
      (x: { name: string }) => x.name === t.name,
    );
    expect(same).toEqual([expect.objectContaining({ id: t.id })]);
  });

  it.each<[string, unknown, string]>([
    ['no name', {}, 'body.name'],
    ['an empty name', { name: '' }, 'body.name'],
    ['a blank name', { name: '   ' }, 'body.name'],
    ['a name of 101 characters', { name: 'n'.repeat(101) }, 'body.name'],
    ['a name with a control character', { name: 'bad\u0007name' }, 'body.name'],
    ['a numeric name', { name: 7 }, 'body.name'],
    ['an unknown field', { name: 'fine', members: [] }, 'body'],
  ])('rejects creating a team with %s: 400', async (_what, body, path) => {
    expectProblem(
      await h.http
        .post('/v1/teams')
        .set(bearer(h.admin.token))
        .send(body as object),
      400,
      path,
    );
  });

  it('answers 404 for an unknown team on every team route', async () => {
    const u = await h.user('viewer');
    const admin = bearer(h.admin.token);
    expectProblem(await h.http.get(`/v1/teams/${UNKNOWN_TEAM}`).set(admin), 404);
    expectProblem(await h.http.delete(`/v1/teams/${UNKNOWN_TEAM}`).set(admin), 404);
    expectProblem(await h.http.get(`/v1/teams/${UNKNOWN_TEAM}/members`).set(admin), 404);
    expectProblem(await h.http.post(`/v1/teams/${UNKNOWN_TEAM}/members`).set(admin).send({ user_id: u.id }), 404);
    expectProblem(await h.http.delete(`/v1/teams/${UNKNOWN_TEAM}/members/${u.id}`).set(admin), 404);
  });

  it.each([
    ['not an id', 'not-even-an-id'],
    ['a user id', 'usr_01ARZ3NDEKTSV4RRFFQ69G5FAV'],
    ['a NUL byte', '%00'],
  ])('answers 400 naming path.id when the team id is %s', async (_what, bad) => {
    const admin = bearer(h.admin.token);
    expectProblem(await h.http.get(`/v1/teams/${bad}`).set(admin), 400, 'path.id');
    expectProblem(await h.http.delete(`/v1/teams/${bad}`).set(admin), 400, 'path.id');
    expectProblem(await h.http.get(`/v1/teams/${bad}/members`).set(admin), 400, 'path.id');
    expectProblem(
      await h.http.post(`/v1/teams/${bad}/members`).set(admin).send({ user_id: h.admin.id }),
      400,
      'path.id',
    );
    expectProblem(await h.http.delete(`/v1/teams/${bad}/members/${h.admin.id}`).set(admin), 400, 'path.id');
  });

  it.each([
    ['not an id', 'someone'],
    ['a team id', UNKNOWN_TEAM],
    ['a NUL byte', '%00'],
  ])('answers 400 naming path.userID when the member id is %s', async (_what, bad) => {
    const t = await createTeam(h.admin.token);
    expectProblem(
      await h.http.delete(`/v1/teams/${t.id}/members/${bad}`).set(bearer(h.admin.token)),
      400,
      'path.userID',
    );
  });

  it('adds, lists and removes members; duplicates are 409, non-members 404', async () => {
    const op = await h.user('operator');
    const t = await createTeam(op.token);
    const [a, b] = [await h.user('viewer'), await h.user('operator')];
    const added = await addMember(op.token, t.id, a.id);
    expect(added.status).toBe(201);
    expect(added.headers.location).toBe(`/v1/teams/${t.id}/members`);
    expect(added.body).toEqual({ user_id: a.id, username: a.username, role: 'viewer', added_at: expect.any(String) });
    expect((await addMember(op.token, t.id, b.id)).status).toBe(201);
    const dup = await addMember(op.token, t.id, a.id);
    expectProblem(dup, 409);

    const viewer = await h.user('viewer');
    const members = await h.http.get(`/v1/teams/${t.id}/members`).set(bearer(viewer.token));
    expect(members.status).toBe(200);
    expect(members.body.map((m: { user_id: string }) => m.user_id)).toEqual([b.id, a.id]);
    const page = await h.http.get(`/v1/teams/${t.id}/members?limit=1`).set(bearer(viewer.token));
    expect(page.body.map((m: { user_id: string }) => m.user_id)).toEqual([b.id]);
    const next = /^<([^>]+)>; rel="next"$/.exec(page.headers.link as string);
    expect(next).not.toBeNull();
    expect(
      (await h.http.get(next![1]!).set(bearer(viewer.token))).body.map((m: { user_id: string }) => m.user_id),
    ).toEqual([a.id]);

    expect((await h.http.delete(`/v1/teams/${t.id}/members/${a.id}`).set(bearer(op.token))).status).toBe(204);
    expectProblem(await h.http.delete(`/v1/teams/${t.id}/members/${a.id}`).set(bearer(op.token)), 404);
    expectProblem(await h.http.delete(`/v1/teams/${t.id}/members/${viewer.id}`).set(bearer(op.token)), 404);
    const after = await h.http.get(`/v1/teams/${t.id}/members`).set(bearer(op.token));
    expect(after.body.map((m: { user_id: string }) => m.user_id)).toEqual([b.id]);
    // A removed member can be added again.
    expect((await addMember(op.token, t.id, a.id)).status).toBe(201);
  });

  it.each<[string, unknown, number, string | undefined]>([
    ['an unknown user', { user_id: UNKNOWN_USER }, 404, undefined],
    ['a user_id that is not a usr_ id', { user_id: 'team_01ARZ3NDEKTSV4RRFFQ69G5FAV' }, 400, 'body.user_id'],
    ['a user_id of the wrong type', { user_id: 12 }, 400, 'body.user_id'],
    ['a lower-case id', { user_id: 'usr_01arz3ndektsv4rrffq69g5fav' }, 400, 'body.user_id'],
    ['no user_id', {}, 400, 'body.user_id'],
    ['an unknown field', { user_id: UNKNOWN_USER, role: 'admin' }, 400, 'body'],
  ])('rejects adding a member with %s', async (_what, body, status, path) => {
    const t = await createTeam(h.admin.token);
    expectProblem(
      await h.http
        .post(`/v1/teams/${t.id}/members`)
        .set(bearer(h.admin.token))
        .send(body as object),
      status,
      path,
    );
    expect((await h.http.get(`/v1/teams/${t.id}/members`).set(bearer(h.admin.token))).body).toEqual([]);
  });

  it('refuses another operator without a grant with 403 (teams are listable), and a viewer even with manage', async () => {
    const owner = await h.user('operator');
    const t = await createTeam(owner.token);
    const member = await h.user('viewer');
    expect((await addMember(owner.token, t.id, member.id)).status).toBe(201);
    const stranger = await h.user('operator');
    const viewer = await h.user('viewer');
    const grant = await h.http
      .post('/v1/grants')
      .set(bearer(h.admin.token))
      .send({ subject: viewer.id, object: t.id, level: 'manage' });
    expect(grant.status).toBe(201);
    for (const caller of [stranger, viewer]) {
      expectProblem(await h.http.delete(`/v1/teams/${t.id}`).set(bearer(caller.token)), 403);
      expectProblem(await addMember(caller.token, t.id, caller.id), 403);
      expectProblem(await h.http.delete(`/v1/teams/${t.id}/members/${member.id}`).set(bearer(caller.token)), 403);
      // …yet they may read it.
      expect((await h.http.get(`/v1/teams/${t.id}`).set(bearer(caller.token))).status).toBe(200);
      expect((await h.http.get(`/v1/teams/${t.id}/members`).set(bearer(caller.token))).status).toBe(200);
    }
    // Nothing changed.
    const members = await h.http.get(`/v1/teams/${t.id}/members`).set(bearer(owner.token));
    expect(members.body.map((m: { user_id: string }) => m.user_id)).toEqual([member.id]);
    // A use grant is not enough either.
    const user = await h.user('operator');
    expect(
      (await h.http.post('/v1/grants').set(bearer(owner.token)).send({ subject: user.id, object: t.id, level: 'use' }))
        .status,
    ).toBe(201);
    expectProblem(await addMember(user.token, t.id, user.id), 403);
    // A manage grant given by the owner is.
    const helper = await h.user('operator');
    expect(
      (
        await h.http
          .post('/v1/grants')
          .set(bearer(owner.token))
          .send({ subject: helper.id, object: t.id, level: 'manage' })
      ).status,
    ).toBe(201);
    expect((await addMember(helper.token, t.id, helper.id)).status).toBe(201);
  });

  it('deletes a team with its memberships and every grant that mentions it', async () => {
    const op = await h.user('operator');
    const doomed = await createTeam(op.token);
    const other = await createTeam(op.token);
    const member = await h.user('operator');
    expect((await addMember(op.token, doomed.id, member.id)).status).toBe(201);
    // The doomed team holds manage on the other team; a user holds use on the doomed team.
    const held = await h.http
      .post('/v1/grants')
      .set(bearer(op.token))
      .send({ subject: doomed.id, object: other.id, level: 'manage' });
    expect(held.status).toBe(201);
    const on = await h.http
      .post('/v1/grants')
      .set(bearer(op.token))
      .send({ subject: member.id, object: doomed.id, level: 'use' });
    expect(on.status).toBe(201);
    // Through the team, the member may manage the other team.
    expect((await addMember(member.token, other.id, member.id)).status).toBe(201);
    expect((await h.http.delete(`/v1/teams/${other.id}/members/${member.id}`).set(bearer(member.token))).status).toBe(
      204,
    );

    const del = await h.http.delete(`/v1/teams/${doomed.id}`).set(bearer(op.token));
    expect(del.status).toBe(204);
    expectProblem(await h.http.get(`/v1/teams/${doomed.id}`).set(bearer(op.token)), 404);
    expectProblem(await h.http.get(`/v1/teams/${doomed.id}/members`).set(bearer(op.token)), 404);
    expect(await h.tdb.db.repos.teams.teamIdsOf(member.id)).toEqual([]);
    for (const g of [held.body.id, on.body.id])
      expectProblem(await h.http.get(`/v1/grants/${g}`).set(bearer(h.admin.token)), 404);
    expect(await grantsOn(doomed.id)).toEqual([]);
    expect((await h.http.get(`/v1/grants?subject=${doomed.id}`).set(bearer(h.admin.token))).body).toEqual([]);
    // The member lost what the team gave them; the other team and its owner's grant are untouched.
    expectProblem(await addMember(member.token, other.id, member.id), 403);
    expect(await grantsOn(other.id)).toEqual([expect.objectContaining({ subject: op.id, level: 'manage' })]);
    expectProblem(await h.http.delete(`/v1/teams/${doomed.id}`).set(bearer(op.token)), 404);
  });

  it('records team mutations in the audit trail', async () => {
    const op = await h.user('operator');
    const t = await createTeam(op.token);
    const u = await h.user('viewer');
    expect((await addMember(op.token, t.id, u.id)).status).toBe(201);
    expect((await h.http.delete(`/v1/teams/${t.id}/members/${u.id}`).set(bearer(op.token))).status).toBe(204);
    expect((await h.http.delete(`/v1/teams/${t.id}`).set(bearer(op.token))).status).toBe(204);
    const res = await h.http.get(`/v1/audit?object=${t.id}`).set(bearer(h.admin.token));
    expect(res.status).toBe(200);
    expect(res.body.map((e: { action: string }) => e.action)).toEqual([
      'team.delete',
      'team.member_remove',
      'team.member_add',
      'team.create',
    ]);
    for (const e of res.body) expect(e.actor).toBe(op.id);
  });
});
