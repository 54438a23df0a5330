import { AuthMethods, LoginResponse, SsoExchangeBody } from '@baton/contracts';
import { defineOperation, type Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';

/** Sign-in methods on offer and the exchange of a single sign-on's one-time code. */
export function ssoRoutes(s: Pick<Services, 'sso'>, opts: { methods: AuthMethods }): Operation[] {
  return [
    defineOperation({
      operationId: 'exchangeSsoCode',
      method: 'post',
      path: '/auth/exchange',
      tag: 'auth',
      auth: 'public',
      summary: 'Exchange the one-time code of a single sign-on for a bearer token.',
      description:
        'After an OIDC or SAML sign-in a browser lands on `/ui/#sso_code=<code>`; the UI posts the code here. A code works once and for at most 60 seconds; unknown, used and expired codes all answer 401.',
      body: SsoExchangeBody,
      responses: { 200: { description: 'Signed in', schema: LoginResponse } },
      async handle({ body, req, res }) {
        res.setHeader('Cache-Control', 'no-store');
        return { status: 200, body: await s.sso.exchange(body.code, req.ip ?? 'unknown') };
      },
    }),
    defineOperation({
      operationId: 'authMethods',
      method: 'get',
      path: '/auth/methods',
      tag: 'auth',
      auth: 'public',
      summary: 'Which sign-in methods this server offers.',
      description: 'The UI shows an OpenID Connect or SAML button only when that method is configured.',
      responses: { 200: { description: 'The methods', schema: AuthMethods } },
      handle() {
        return { status: 200, body: opts.methods };
      },
    }),
  ];
}
