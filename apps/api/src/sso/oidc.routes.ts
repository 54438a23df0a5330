import { LoginResponse, OidcCallbackQuery } from '@baton/contracts';
import { NotFoundError } from '@baton/core';
import { defineOperation, type Operation } from '../http/registry.js';
import type { OidcSignIn } from './oidc.js';

/** The OpenID Connect sign-in routes; both answer 404 when OIDC is not configured. */
export function oidcRoutes(oidc: OidcSignIn | undefined): Operation[] {
  const configured = (): OidcSignIn => {
    if (!oidc) throw new NotFoundError('OpenID Connect sign-in is not configured on this server');
    return oidc;
  };
  return [
    defineOperation({
      operationId: 'oidcLogin',
      method: 'get',
      path: '/auth/oidc/login',
      unversioned: true,
      tag: 'auth',
      auth: 'public',
      summary: 'Start an OpenID Connect sign-in: a redirect to the provider.',
      description:
        'A 302 to the provider’s authorization endpoint (authorization code flow) with a fresh state, nonce and PKCE S256 challenge; the handshake is kept server-side for 10 minutes and can be finished once, on any replica. 404 when OIDC is not configured; 503 while the provider’s discovery document cannot be read (retried at every sign-in).',
      responses: { 302: { description: 'To the provider; `Location` carries the authorization request' } },
      async handle({ req, res }) {
        await configured().login(req, res);
        return undefined;
      },
    }),
    defineOperation({
      operationId: 'oidcCallback',
      method: 'get',
      path: '/auth/oidc/callback',
      unversioned: true,
      tag: 'auth',
      auth: 'public',
      query: OidcCallbackQuery,
      summary: 'Finish an OpenID Connect sign-in (the provider redirects here).',
      description:
        'Checks the state (single use), exchanges the code with the PKCE verifier, checks the ID token (issuer, audience, expiry, nonce) and reads userinfo; then signs the user in (created at the first sign-in, role from the groups claim). A browser gets a 302 to `/ui/#sso_code=<one-time code>` (exchange it with POST /v1/auth/exchange within 60 s) or, on failure, to `/ui/#sso_error=<reason>`. A client that sends `Accept: application/json` gets the token in the body, or problem+json 401 (503 when the provider is unreachable).',
      responses: {
        200: { description: 'Signed in (API client, `Accept: application/json`)', schema: LoginResponse },
        302: { description: 'Browser: to `/ui/#sso_code=…` or `/ui/#sso_error=…`' },
      },
      async handle({ req, res }) {
        await configured().callback(req, res);
        return undefined;
      },
    }),
  ];
}
