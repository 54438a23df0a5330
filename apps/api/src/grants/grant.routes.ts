import { Grant, GrantCreateBody, GrantIdParams, GrantListQuery } from '@baton/contracts';
import { z } from 'zod';
import { pageReply } from '../http/paging.js';
import { defineOperation, type Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';

export function grantRoutes(s: Pick<Services, 'grants'>): Operation[] {
  return [
    defineOperation({
      operationId: 'createGrant',
      method: 'post',
      path: '/grants',
      tag: 'grants',
      auth: 'user',
      legacy: true,
      summary: 'Give a user or a team use or manage on an object (needs manage on the object).',
      body: GrantCreateBody,
      responses: { 201: { description: 'Granted', schema: Grant } },
      async handle({ principal, body }) {
        const grant = await s.grants.create(principal, body);
        return { status: 201, body: grant, headers: { Location: `/v1/grants/${grant.id}` } };
      },
    }),
    defineOperation({
      operationId: 'listGrants',
      method: 'get',
      path: '/grants',
      tag: 'grants',
      auth: 'user',
      legacy: true,
      summary: 'List grants: all for admins; otherwise those you or your teams hold and those on objects you manage.',
      query: GrantListQuery,
      responses: { 200: { description: 'Grants, newest first', schema: z.array(Grant) } },
      async handle({ principal, query, req }) {
        return pageReply(req, await s.grants.list(principal, query));
      },
    }),
    defineOperation({
      operationId: 'getGrant',
      method: 'get',
      path: '/grants/{id}',
      tag: 'grants',
      auth: 'user',
      legacy: true,
      summary: 'One grant.',
      params: GrantIdParams,
      responses: { 200: { description: 'The grant', schema: Grant } },
      async handle({ principal, params }) {
        return { status: 200, body: await s.grants.get(principal, params.id) };
      },
    }),
    defineOperation({
      operationId: 'deleteGrant',
      method: 'delete',
      path: '/grants/{id}',
      tag: 'grants',
      auth: 'user',
      legacy: true,
      summary: 'Delete a grant (needs manage on its object).',
      params: GrantIdParams,
      responses: { 204: { description: 'Deleted' } },
      async handle({ principal, params }) {
        await s.grants.remove(principal, params.id);
        return { status: 204 };
      },
    }),
  ];
}
