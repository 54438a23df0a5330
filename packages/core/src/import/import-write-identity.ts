// Writers for users, teams, memberships and grants.
import { GrantCreateBody, type GrantLevel, type Role, TeamCreateBody, UserCreateBody } from '@baton/contracts';
import { grantCreatorManage } from '../authz/authorize.js';
import { newId } from '../common/ids.js';
import type { PlannedGrant, PlannedMembership, PlannedTeam, PlannedUser } from './import-plan.js';
import { audit, checkBody, type Writer } from './import-write.js';

const UserBody = UserCreateBody.omit({ password: true });
type UserBody = { username: string; role: Role; email?: string | undefined };

/** Users are matched by username; an existing one keeps its role (an import never changes who may do what). */
export const userWriter: Writer<PlannedUser, UserBody> = {
  check: (o, name) => checkBody(UserBody, { username: name, role: o.role, ...(o.email ? { email: o.email } : {}) }),
  async insert(w, body) {
    const id = newId('usr', w.now.getTime());
    await w.tx.users.insert({
      id,
      username: body.username,
      email: body.email ?? null,
      role: body.role,
      password_hash: w.unusablePasswordHash,
      created_at: w.at,
      updated_at: w.at,
    });
    await audit(
      w,
      'user.create',
      id,
      `imported user ${body.username} (${body.role}) from ${w.source}, without a password`,
    );
    return id;
  },
  async update(w, id, body) {
    if (body.email === undefined) return 'nothing to change (an import keeps an existing user’s role and password)';
    await w.tx.users.update(id, { email: body.email, updated_at: w.at });
    await audit(w, 'user.update', id, `updated user ${body.username} from ${w.source}: changed email`);
    return undefined;
  },
};

export const teamWriter: Writer<PlannedTeam, { name: string }> = {
  check: (_o, name) => checkBody(TeamCreateBody, { name }),
  async insert(w, body) {
    const id = newId('team', w.now.getTime());
    await w.tx.teams.insert({ id, name: body.name, created_at: w.at, created_by: w.importer.id });
    await grantCreatorManage(w.tx.grants, w.importer, id, w.now);
    await audit(w, 'team.create', id, `imported team ${body.name} from ${w.source}`);
    return id;
  },
  // A team is only its name: there is nothing to overwrite.
  update: async () => 'a team has nothing to overwrite but its name',
};

type MembershipBody = { team_id: string; user_id: string };

export const membershipWriter: Writer<PlannedMembership, MembershipBody> & {
  find(w: Parameters<Writer<PlannedMembership, MembershipBody>['insert']>[0], b: MembershipBody): Promise<boolean>;
} = {
  check: (o, _name, ids) => ({ ok: true, body: { team_id: ids.get(o.team)!, user_id: ids.get(o.user)! } }),
  async find(w, b) {
    return (await w.tx.teams.teamIdsOf(b.user_id)).includes(b.team_id);
  },
  async insert(w, body, o) {
    await w.tx.teams.addMember({ team_id: body.team_id, user_id: body.user_id, added_at: w.at });
    await audit(w, 'team.member_add', body.team_id, `imported membership: ${o.name} (from ${w.source})`);
    return `${body.team_id}/${body.user_id}`;
  },
  update: async () => undefined,
};

type GrantBody = { subject: string; object: string; level: GrantLevel };
const RANK: Record<GrantLevel, number> = { use: 1, manage: 2 };

/** A grant that exists is raised to the imported level when that is higher, never lowered. */
export const grantWriter: Writer<PlannedGrant, GrantBody> & {
  find(w: Parameters<Writer<PlannedGrant, GrantBody>['insert']>[0], b: GrantBody): Promise<boolean>;
} = {
  check: (o, _name, ids) =>
    checkBody(GrantCreateBody, { subject: ids.get(o.subject), object: ids.get(o.object), level: o.level }),
  async find(w, b) {
    const held = await w.tx.grants.findBySubjectAndObject(b.subject, b.object);
    if (!held) return false;
    if (RANK[b.level] > RANK[held.level as GrantLevel]) {
      await w.tx.grants.update(held.id, b.level);
      await audit(
        w,
        'grant.update',
        held.id,
        `raised grant on ${b.object} for ${b.subject} to ${b.level} (import from ${w.source})`,
      );
    }
    return true;
  },
  async insert(w, body, o) {
    const id = newId('grant', w.now.getTime());
    await w.tx.grants.insert({
      id,
      subject_id: body.subject,
      object_id: body.object,
      level: body.level,
      created_at: w.at,
      created_by: w.importer.id,
    });
    await audit(w, 'grant.create', id, `imported grant: ${o.name} (from ${w.source})`);
    return id;
  },
  update: async () => undefined,
};
