import type { Kysely, Selectable } from 'kysely';
import { toNumber } from '../dialect.js';
import { refusingDuplicates } from '../errors.js';
import { keysetPage, type PageQuery } from '../page.js';
import type { Schema, TeamMemberTable, TeamTable } from '../schema.js';

export type TeamRow = Selectable<TeamTable>;
export type TeamMemberRow = Selectable<TeamMemberTable>;
export interface TeamMemberView {
  user_id: string;
  username: string;
  role: string;
  added_at: string;
}

export function createTeamRepo(db: Kysely<Schema>) {
  return {
    async insert(row: TeamRow): Promise<void> {
      await refusingDuplicates(db.insertInto('teams').values(row).execute());
    },
    async findById(id: string): Promise<TeamRow | undefined> {
      return db.selectFrom('teams').selectAll().where('id', '=', id).executeTakeFirst();
    },
    async list(page: PageQuery): Promise<TeamRow[]> {
      return keysetPage(db.selectFrom('teams').selectAll(), 'id', page).execute();
    },
    async delete(id: string): Promise<boolean> {
      const r = await db.deleteFrom('teams').where('id', '=', id).executeTakeFirst();
      return toNumber(r.numDeletedRows) > 0;
    },
    async addMember(row: TeamMemberRow): Promise<void> {
      await refusingDuplicates(db.insertInto('team_members').values(row).execute());
    },
    async removeMember(teamId: string, userId: string): Promise<boolean> {
      const r = await db
        .deleteFrom('team_members')
        .where('team_id', '=', teamId)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return toNumber(r.numDeletedRows) > 0;
    },
    async listMembers(teamId: string, page: PageQuery): Promise<TeamMemberView[]> {
      const members = db
        .selectFrom('team_members as m')
        .innerJoin('users as u', 'u.id', 'm.user_id')
        .select(['m.user_id', 'u.username', 'u.role', 'm.added_at'])
        .where('m.team_id', '=', teamId);
      return keysetPage(members, 'm.user_id', page).execute();
    },
    async teamIdsOf(userId: string): Promise<string[]> {
      const rows = await db.selectFrom('team_members').select('team_id').where('user_id', '=', userId).execute();
      return rows.map((r) => r.team_id);
    },
  };
}
export type TeamRepo = ReturnType<typeof createTeamRepo>;
