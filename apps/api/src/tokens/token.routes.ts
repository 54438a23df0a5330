import { Token, TokenCreateBody, TokenIdParams, TokenListQuery, TokenWithSecret } from '@baton/contracts';
import { z } from 'zod';
import { pageReply } from '../http/paging.js';
import { defineOperation, type Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';

const location = (id: string) => ({ Location: `/v1/tokens/${id}` });

/** Personal API tokens (issue 12). Not served without /v1: earlier editions had none. */
export function tokenRoutes(s: Pick<Services, 'tokens'>): Operation[] {
  return [
    defineOperation({
      operationId: 'createToken',
      method: 'post',
      path: '/tokens',
      tag: 'tokens',
      auth: 'user',
      summary: 'Create a personal API token for the caller (any signed-in user); the secret is shown only now.',
      description:
        'For automation (CI jobs, scripts): `Authorization: Bearer <token>` acts as the caller, with the caller’s role as it is at each request. `scope: read` refuses every change with 403. The token expires after `expires_in_days` (default 90, at most 3650) and stops working at once when it is revoked, when its owner is deleted, or while its owner’s role is below the role they had when creating it. Needs a sign-in token: a personal token cannot create tokens (403).',
      body: TokenCreateBody,
      responses: {
        201: { description: 'Created; `token` is never shown again', schema: TokenWithSecret },
        403: { description: 'the request came with a personal token (or a read-scope token)' },
      },
      async handle({ principal, body }) {
        const token = await s.tokens.create(principal, body);
        return { status: 201, body: token, headers: location(token.id) };
      },
    }),
    defineOperation({
      operationId: 'listTokens',
      method: 'get',
      path: '/tokens',
      tag: 'tokens',
      auth: 'user',
      summary:
        'List personal API tokens (never their secrets): the caller’s own; admins: `?user=usr_…` or `?all=true`.',
      description:
        'Revoked tokens are not listed; expired ones are, with `status: expired`, until they are revoked. Sign-in (session) tokens are never listed: they end with POST /v1/auth/logout.',
      query: TokenListQuery,
      responses: {
        200: { description: 'Tokens, newest first', schema: z.array(Token) },
        403: { description: 'another user’s tokens or everyone’s, asked for by someone not an admin' },
      },
      async handle({ principal, query, req }) {
        return pageReply(req, await s.tokens.list(principal, query));
      },
    }),
    defineOperation({
      operationId: 'getToken',
      method: 'get',
      path: '/tokens/{id}',
      tag: 'tokens',
      auth: 'user',
      summary: 'One personal API token (never its secret): the caller’s own, or anyone’s for an admin.',
      params: TokenIdParams,
      responses: {
        200: { description: 'The token', schema: Token },
        404: { description: 'unknown, revoked, a sign-in token, or another user’s (for non-admins)' },
      },
      async handle({ principal, params }) {
        return { status: 200, body: await s.tokens.get(principal, params.id) };
      },
    }),
    defineOperation({
      operationId: 'revokeToken',
      method: 'delete',
      path: '/tokens/{id}',
      tag: 'tokens',
      auth: 'user',
      summary: 'Revoke a personal API token (the caller’s own, or anyone’s for an admin); it answers 401 from now on.',
      params: TokenIdParams,
      responses: {
        204: { description: 'Revoked' },
        404: { description: 'unknown, already revoked, a sign-in token, or another user’s (for non-admins)' },
      },
      async handle({ principal, params }) {
        await s.tokens.revoke(principal, params.id);
        return { status: 204 };
      },
    }),
  ];
}
