import { CheckResponse, LoginBody, LoginResponse } from '@baton/contracts';
import { defineOperation, type Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';

export function authRoutes(s: Pick<Services, 'auth'>): Operation[] {
  return [
    defineOperation({
      operationId: 'login',
      method: 'post',
      path: '/auth/login',
      tag: 'auth',
      auth: 'public',
      legacy: true,
      summary: 'Sign in with username and password; returns a bearer token (shown once).',
      description:
        'Wrong credentials answer 401 without telling whether the user exists. Failed attempts are limited per username and per client address (429 with Retry-After).',
      body: LoginBody,
      responses: { 200: { description: 'Signed in', schema: LoginResponse } },
      async handle({ body, req }) {
        return { status: 200, body: await s.auth.login(body, req.ip ?? 'unknown') };
      },
    }),
    defineOperation({
      operationId: 'checkToken',
      method: 'post',
      path: '/auth/check',
      tag: 'auth',
      auth: 'user',
      legacy: true,
      allowReadScope: true,
      summary: 'Verify the bearer token of this request.',
      description:
        'Answers who the token acts as and what it is: its kind (`session` from a sign-in, `personal` from POST /v1/tokens, which also carry `token_id` and `token_name`), its scope and its expiry.',
      responses: { 200: { description: 'The token is valid', schema: CheckResponse } },
      async handle({ req }) {
        const token = req.headers.authorization!.slice('Bearer '.length);
        const session = await s.auth.authenticate(token);
        const personal = session.token.kind === 'personal';
        return {
          status: 200,
          body: {
            valid: true,
            user: session.user,
            role: session.user.role,
            expires_at: session.expires_at,
            kind: session.token.kind,
            scope: session.token.scope,
            ...(personal ? { token_id: session.token.id, token_name: session.token.name ?? '' } : {}),
          },
        };
      },
    }),
    defineOperation({
      operationId: 'logout',
      method: 'post',
      path: '/auth/logout',
      tag: 'auth',
      auth: 'user',
      // Ending one's own token is allowed to any token, read-scoped ones included.
      allowReadScope: true,
      summary: 'Revoke the bearer token of this request (a sign-in session or a personal token).',
      responses: { 204: { description: 'Revoked' } },
      async handle({ principal }) {
        await s.auth.logout(principal);
        return { status: 204 };
      },
    }),
  ];
}
