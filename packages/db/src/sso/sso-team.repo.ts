import type { Kysely } from 'kysely';
import { toNumber } from '../dialect.js';
import type { Schema } from '../schema.js';
import type { TeamRow } from '../teams/team.repo.js';

/** What single sign-on's team sync needs: teams by name, created when missing, and one user's memberships. */
export function createSsoTeamRepo(db: Kysely<Schema>) {
  return {
    async findByNames(names: string[]): Promise<TeamRow[]> {
      if (names.length === 0) return [];
      return db.selectFrom('teams').selectAll().where('name', 'in', names).execute();
    },
    /** Inserts the team unless one of that name exists (two replicas syncing at once both end with the one team). */
    async insertIfMissing(row: TeamRow): Promise<boolean> {
      const r = await db
        .insertInto('teams')
        .values(row)
        .onConflict((oc) => oc.column('name').doNothing())
        .executeTakeFirst();
      return toNumber(r.numInsertedOrUpdatedRows) > 0;
    },
    async addMemberIfMissing(teamId: string, userId: string, at: string): Promise<boolean> {
      const r = await db
        .insertInto('team_members')
        .values({ team_id: teamId, user_id: userId, added_at: at })
        .onConflict((oc) => oc.columns(['team_id', 'user_id']).doNothing())
        .executeTakeFirst();
      return toNumber(r.numInsertedOrUpdatedRows) > 0;
    },
  };
}
export type SsoTeamRepo = ReturnType<typeof createSsoTeamRepo>;
