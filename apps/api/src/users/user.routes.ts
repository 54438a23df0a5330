import { ListQuery, User, UserCreateBody, UserIdParams, UserUpdateBody } from '@baton/contracts';
import { z } from 'zod';
import { pageReply } from '../http/paging.js';
import { defineOperation, type Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';

export function userRoutes(s: Pick<Services, 'users'>): Operation[] {
  return [
    defineOperation({
      operationId: 'createUser',
      method: 'post',
      path: '/users',
      tag: 'users',
      auth: 'user',
      legacy: true,
      summary: 'Create an account with a role (admin only).',
      body: UserCreateBody,
      responses: { 201: { description: 'Created', schema: User } },
      async handle({ principal, body }) {
        const user = await s.users.create(principal, body);
        return { status: 201, body: user, headers: { Location: `/v1/users/${user.id}` } };
      },
    }),
    defineOperation({
      operationId: 'listUsers',
      method: 'get',
      path: '/users',
      tag: 'users',
      auth: 'user',
      legacy: true,
      summary: 'List accounts (any signed-in user; e-mail addresses for admins only).',
      query: ListQuery,
      responses: { 200: { description: 'Users, newest first', schema: z.array(User) } },
      async handle({ principal, query, req }) {
        return pageReply(req, await s.users.list(principal, query));
      },
    }),
    defineOperation({
      operationId: 'getUser',
      method: 'get',
      path: '/users/{id}',
      tag: 'users',
      auth: 'user',
      legacy: true,
      summary: 'One account.',
      params: UserIdParams,
      responses: { 200: { description: 'The user', schema: User } },
      async handle({ principal, params }) {
        return { status: 200, body: await s.users.get(principal, params.id) };
      },
    }),
    defineOperation({
      operationId: 'updateUser',
      method: 'put',
      path: '/users/{id}',
      tag: 'users',
      auth: 'user',
      legacy: true,
      summary:
        "Change an account's role, password or e-mail (admin only). A new password ends the user's other sessions.",
      params: UserIdParams,
      body: UserUpdateBody,
      responses: { 200: { description: 'Updated', schema: User } },
      async handle({ principal, params, body }) {
        return { status: 200, body: await s.users.update(principal, params.id, body) };
      },
    }),
    defineOperation({
      operationId: 'deleteUser',
      method: 'delete',
      path: '/users/{id}',
      tag: 'users',
      auth: 'user',
      legacy: true,
      summary: 'Delete an account (admin only). Its tokens stop working at once; the last admin cannot be deleted.',
      params: UserIdParams,
      responses: { 204: { description: 'Deleted' } },
      async handle({ principal, params }) {
        await s.users.remove(principal, params.id);
        return { status: 204 };
      },
    }),
  ];
}
