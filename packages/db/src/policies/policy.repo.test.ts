import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'kysely';
import { DuplicateKeyError } from '../errors.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../testing/index.js';
import type { PolicyRow } from './policy.repo.js';

const at = '2026-11-26T10:00:00.000Z';
const ULID = '01ARZ3NDEKTSV4RRFFQ69G5F';

/** A policy row; ids sort by their last two characters. */
function policyRow(n: number, over: Partial<PolicyRow> = {}): PolicyRow {
  return {
    id: `pol_${ULID}${String(n).padStart(2, '0')}`,
    name: `policy ${n}`,
    description: null,
    enabled: 1,
    match: {},
    approvers: {},
    min_approvals: 1,
    expires_after_s: null,
    created_by: 'usr_A',
    created_at: at,
    updated_at: at,
    ...over,
  };
}

describe.each(DIALECTS)('policy repository on %s', (dialect) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(dialect);
  });
  afterAll(() => t.drop());
  const repo = () => t.db.repos.policies;

  it('stores match and approvers as JSON text and hands them back typed, exactly as given', async () => {
    const row = policyRow(1, {
      description: 'prod gate ü',
      match: { projects: ['prj_1'], hosts: ['web-*', '[2001:db8::1]'], check: false, origins: ['api'] },
      approvers: { roles: ['operator'], teams: ['team_1'] },
      min_approvals: 2,
      expires_after_s: 3600,
    });
    await repo().insert(row);
    const stored = (
      await sql<{
        match: string;
        approvers: string;
      }>`select match, approvers from policies where id = ${row.id}`.execute(t.db.kysely)
    ).rows[0];
    expect(stored).toEqual({ match: JSON.stringify(row.match), approvers: JSON.stringify(row.approvers) });
    expect(await repo().findById(row.id)).toEqual(row);
    expect(await repo().findById(policyRow(99).id)).toBeUndefined();
  });

  it('refuses a second policy of the same name with a DuplicateKeyError, on insert and on rename', async () => {
    await repo().insert(policyRow(2, { name: 'unique name' }));
    await expect(repo().insert(policyRow(3, { name: 'unique name' }))).rejects.toBeInstanceOf(DuplicateKeyError);
    await repo().insert(policyRow(3, { name: 'other name' }));
    await expect(repo().update(policyRow(3).id, { name: 'unique name' })).rejects.toBeInstanceOf(DuplicateKeyError);
  });

  it('lists newest first in keyset pages', async () => {
    await repo().insert(policyRow(4));
    const all = await repo().list({ limit: 10 });
    expect(all.map((r) => r.id)).toEqual([4, 3, 2, 1].map((n) => policyRow(n).id));
    const first = await repo().list({ limit: 2 });
    expect(first.map((r) => r.id)).toEqual([policyRow(4).id, policyRow(3).id]);
    const second = await repo().list({ limit: 2, before: first[1]!.id });
    expect(second.map((r) => r.id)).toEqual([policyRow(2).id, policyRow(1).id]);
    expect(await repo().list({ limit: 2, before: policyRow(1).id })).toEqual([]);
  });

  it('patches only the given fields; null clears the expiry; answers false for an unknown id', async () => {
    const id = policyRow(4).id;
    expect(
      await repo().update(id, {
        enabled: 0,
        match: { labels: ['gpu'] },
        expires_after_s: 60,
        updated_at: '2026-11-26T11:00:00.000Z',
      }),
    ).toBe(true);
    expect(await repo().findById(id)).toEqual(
      policyRow(4, {
        enabled: 0,
        match: { labels: ['gpu'] },
        expires_after_s: 60,
        updated_at: '2026-11-26T11:00:00.000Z',
      }),
    );
    expect(await repo().update(id, { expires_after_s: null, description: 'd' })).toBe(true);
    expect(await repo().findById(id)).toMatchObject({ expires_after_s: null, description: 'd', enabled: 0 });
    expect(await repo().update(policyRow(98).id, { name: 'x' })).toBe(false);
  });

  it('lists every enabled policy, oldest first, and none of the disabled ones', async () => {
    const enabled = await repo().listEnabled();
    expect(enabled.map((r) => r.id)).toEqual([1, 2, 3].map((n) => policyRow(n).id));
    expect(enabled[0]!.match).toEqual(expect.objectContaining({ projects: ['prj_1'] }));
  });

  it('deletes a policy once', async () => {
    const id = policyRow(2).id;
    expect(await repo().delete(id)).toBe(true);
    expect(await repo().delete(id)).toBe(false);
    expect(await repo().findById(id)).toBeUndefined();
    expect((await repo().listEnabled()).map((r) => r.id)).not.toContain(id);
  });
});
