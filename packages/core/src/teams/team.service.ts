import type { TeamMemberView } from '@baton/db';
import {
  type AuditRepo,
  DuplicateKeyError,
  type GrantRepo,
  type PageQuery,
  type TeamRepo,
  type TeamRow,
  type UserRepo,
} from '@baton/db';
import { recordAudit } from '../audit/audit.chain.js';
import { grantCreatorManage, notFound } from '../authz/authorize.js';
import type { Authorizer, Principal } from '../authz/authorize.js';
import { type Clock, iso } from '../common/clock.js';
import { ConflictError, NotFoundError } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { decodeCursor, type Page, toPage } from '../common/paging.js';

type TxRepos = {
  teams: Pick<TeamRepo, 'insert' | 'findById' | 'delete' | 'addMember' | 'removeMember'>;
  users: Pick<UserRepo, 'findById'>;
  grants: Pick<GrantRepo, 'insert' | 'deleteMentioning'>;
  audit: Pick<AuditRepo, 'append'>;
};

export function createTeamService(deps: {
  teams: Pick<TeamRepo, 'list' | 'findById' | 'listMembers'>;
  transaction: <T>(fn: (r: TxRepos) => Promise<T>) => Promise<T>;
  authz: Pick<Authorizer, 'requireCreator' | 'require'>;
  clock: Clock;
}) {
  async function existing(id: string): Promise<TeamRow> {
    const team = await deps.teams.findById(id);
    if (!team) throw notFound('team', id);
    return team;
  }

  return {
    async create(p: Principal, body: { name: string }): Promise<TeamRow> {
      deps.authz.requireCreator(p);
      const now = deps.clock();
      const team: TeamRow = {
        id: newId('team', now.getTime()),
        name: body.name,
        created_at: iso(now),
        created_by: p.id,
      };
      try {
        await deps.transaction(async (r) => {
          await r.teams.insert(team);
          await grantCreatorManage(r.grants, p, team.id, now);
          await recordAudit(
            r.audit,
            { actor: p.id, action: 'team.create', object: team.id, summary: `created team ${team.name}` },
            deps.clock,
          );
        });
      } catch (err) {
        if (err instanceof DuplicateKeyError) throw new ConflictError(`a team named ${body.name} already exists`);
        throw err;
      }
      return team;
    },

    /** Every signed-in user may list teams, to name grant subjects. */
    async list(_p: Principal, page: PageQuery & { cursor?: string | undefined }): Promise<Page<TeamRow>> {
      const rows = await deps.teams.list({ limit: page.limit + 1, before: decodeCursor(page.cursor) });
      return toPage(rows, page.limit, (t) => t.id);
    },

    get(_p: Principal, id: string): Promise<TeamRow> {
      return existing(id);
    },

    async remove(p: Principal, id: string): Promise<void> {
      const team = await existing(id);
      await deps.authz.require(p, id, 'manage', { listable: true });
      await deps.transaction(async (r) => {
        await r.grants.deleteMentioning(id);
        if (!(await r.teams.delete(id))) throw notFound('team', id);
        await recordAudit(
          r.audit,
          { actor: p.id, action: 'team.delete', object: id, summary: `deleted team ${team.name}` },
          deps.clock,
        );
      });
    },

    async addMember(p: Principal, teamId: string, userId: string): Promise<TeamMemberView> {
      const team = await existing(teamId);
      await deps.authz.require(p, teamId, 'manage', { listable: true });
      const added_at = iso(deps.clock());
      try {
        return await deps.transaction(async (r) => {
          const user = await r.users.findById(userId);
          if (!user) throw notFound('user', userId);
          await r.teams.addMember({ team_id: teamId, user_id: userId, added_at });
          await recordAudit(
            r.audit,
            {
              actor: p.id,
              action: 'team.member_add',
              object: teamId,
              summary: `added ${user.username} to team ${team.name}`,
            },
            deps.clock,
          );
          return { user_id: userId, username: user.username, role: user.role, added_at };
        });
      } catch (err) {
        if (err instanceof DuplicateKeyError) throw new ConflictError(`${userId} is already a member of ${teamId}`);
        throw err;
      }
    },

    async listMembers(
      _p: Principal,
      teamId: string,
      page: PageQuery & { cursor?: string | undefined },
    ): Promise<Page<TeamMemberView>> {
      await existing(teamId);
      const rows = await deps.teams.listMembers(teamId, { limit: page.limit + 1, before: decodeCursor(page.cursor) });
      return toPage(rows, page.limit, (m) => m.user_id);
    },

    async removeMember(p: Principal, teamId: string, userId: string): Promise<void> {
      const team = await existing(teamId);
      await deps.authz.require(p, teamId, 'manage', { listable: true });
      await deps.transaction(async (r) => {
        if (!(await r.teams.removeMember(teamId, userId)))
          throw new NotFoundError(`${userId} is not a member of ${teamId}`);
        await recordAudit(
          r.audit,
          {
            actor: p.id,
            action: 'team.member_remove',
            object: teamId,
            summary: `removed ${userId} from team ${team.name}`,
          },
          deps.clock,
        );
      });
    },
  };
}
export type TeamService = ReturnType<typeof createTeamService>;
