import {
  ListQuery,
  Team,
  TeamCreateBody,
  TeamIdParams,
  TeamMember,
  TeamMemberAddBody,
  TeamMemberParams,
} from '@baton/contracts';
import { z } from 'zod';
import { pageReply } from '../http/paging.js';
import { defineOperation, type Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';

export function teamRoutes(s: Pick<Services, 'teams'>): Operation[] {
  return [
    defineOperation({
      operationId: 'createTeam',
      method: 'post',
      path: '/teams',
      tag: 'teams',
      auth: 'user',
      legacy: true,
      summary: 'Create a team (operators and admins; the creator gets manage on it).',
      body: TeamCreateBody,
      responses: { 201: { description: 'Created', schema: Team } },
      async handle({ principal, body }) {
        const team = await s.teams.create(principal, body);
        return { status: 201, body: team, headers: { Location: `/v1/teams/${team.id}` } };
      },
    }),
    defineOperation({
      operationId: 'listTeams',
      method: 'get',
      path: '/teams',
      tag: 'teams',
      auth: 'user',
      legacy: true,
      summary: 'List teams.',
      query: ListQuery,
      responses: { 200: { description: 'Teams, newest first', schema: z.array(Team) } },
      async handle({ principal, query, req }) {
        return pageReply(req, await s.teams.list(principal, query));
      },
    }),
    defineOperation({
      operationId: 'getTeam',
      method: 'get',
      path: '/teams/{id}',
      tag: 'teams',
      auth: 'user',
      legacy: true,
      summary: 'One team.',
      params: TeamIdParams,
      responses: { 200: { description: 'The team', schema: Team } },
      async handle({ principal, params }) {
        return { status: 200, body: await s.teams.get(principal, params.id) };
      },
    }),
    defineOperation({
      operationId: 'deleteTeam',
      method: 'delete',
      path: '/teams/{id}',
      tag: 'teams',
      auth: 'user',
      legacy: true,
      summary: 'Delete a team, its memberships and the grants it holds (needs manage on the team).',
      params: TeamIdParams,
      responses: { 204: { description: 'Deleted' } },
      async handle({ principal, params }) {
        await s.teams.remove(principal, params.id);
        return { status: 204 };
      },
    }),
    defineOperation({
      operationId: 'addTeamMember',
      method: 'post',
      path: '/teams/{id}/members',
      tag: 'teams',
      auth: 'user',
      legacy: true,
      summary: 'Add a user to a team (needs manage on the team).',
      params: TeamIdParams,
      body: TeamMemberAddBody,
      responses: { 201: { description: 'Added', schema: TeamMember } },
      async handle({ principal, params, body }) {
        const member = await s.teams.addMember(principal, params.id, body.user_id);
        return { status: 201, body: member, headers: { Location: `/v1/teams/${params.id}/members` } };
      },
    }),
    defineOperation({
      operationId: 'listTeamMembers',
      method: 'get',
      path: '/teams/{id}/members',
      tag: 'teams',
      auth: 'user',
      legacy: true,
      summary: "List a team's members.",
      params: TeamIdParams,
      query: ListQuery,
      responses: { 200: { description: 'Members', schema: z.array(TeamMember) } },
      async handle({ principal, params, query, req }) {
        return pageReply(req, await s.teams.listMembers(principal, params.id, query));
      },
    }),
    defineOperation({
      operationId: 'removeTeamMember',
      method: 'delete',
      path: '/teams/{id}/members/{userID}',
      tag: 'teams',
      auth: 'user',
      legacy: true,
      summary: 'Remove a user from a team (needs manage on the team).',
      params: TeamMemberParams,
      responses: { 204: { description: 'Removed' } },
      async handle({ principal, params }) {
        await s.teams.removeMember(principal, params.id, params.userID);
        return { status: 204 };
      },
    }),
  ];
}
