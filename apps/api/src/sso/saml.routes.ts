// SAML sign-in routes (issue 12, "SAML"): the login redirect, the assertion consumer service, the SP metadata.
// They are unversioned (their URLs are registered at the IdP) and answer 404 while SAML is not configured.
import { BatonError, NotFoundError } from '@baton/core';
import express, { type Express } from 'express';
import { z } from 'zod';
import { HttpError } from '../http/problem.js';
import { defineOperation, type Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';
import type { SamlSignIn } from './saml.js';
import { failSsoSignIn, finishSsoSignIn } from './sso-finish.js';

export const SAML_ACS_PATH = '/auth/saml/acs';
/** The largest ACS form accepted (413 above it): a signed response with a few hundred groups stays well under. */
export const SAML_ACS_BODY_LIMIT = 512 * 1024;
const FORM = 'application/x-www-form-urlencoded';

/**
 * The ACS gets an HTML form post (SAMLResponse, RelayState), which the app's JSON parser does not read: this
 * parser, for that path only and limited in size, comes before it (as the webhooks' raw reader does).
 */
export function mountSamlAcs(app: Express): void {
  app.post(
    SAML_ACS_PATH,
    express.urlencoded({ extended: false, limit: SAML_ACS_BODY_LIMIT, parameterLimit: 16, type: FORM }),
  );
}

function configured(s: { saml?: SamlSignIn | undefined }): SamlSignIn {
  if (!s.saml) throw new NotFoundError('SAML sign-in is not configured on this server (BATON_SAML_* settings)');
  return s.saml;
}

const NOT_CONFIGURED = { 404: { description: 'SAML sign-in is not configured' } };

export function samlRoutes(s: Pick<Services, 'saml' | 'sso' | 'auth'>): Operation[] {
  return [
    defineOperation({
      operationId: 'samlLogin',
      method: 'get',
      path: '/auth/saml/login',
      unversioned: true,
      tag: 'auth',
      auth: 'public',
      summary: 'Start a SAML sign-in: a redirect to the identity provider carrying an AuthnRequest.',
      description:
        'HTTP-Redirect binding; the AuthnRequest is signed (RSA-SHA256) when an SP key is configured. Its id is remembered for 10 minutes by every replica, and the response must answer it (InResponseTo) unless IdP-initiated sign-in is allowed.',
      query: z.object({}),
      responses: { 302: { description: 'To the identity provider’s SSO URL' }, ...NOT_CONFIGURED },
      async handle() {
        const url = await configured(s).loginUrl();
        return { status: 302, headers: { Location: url, 'Cache-Control': 'no-store' } };
      },
    }),
    defineOperation({
      operationId: 'samlAcs',
      method: 'post',
      path: SAML_ACS_PATH,
      unversioned: true,
      tag: 'auth',
      auth: 'public',
      summary:
        'Assertion consumer service: the identity provider’s response, posted by the browser, signs the person in.',
      description:
        'A form (`application/x-www-form-urlencoded`, at most 512 KiB) with `SAMLResponse` (base64) and optionally `RelayState` (ignored). The assertion must be signed with a configured IdP certificate (a signature on the whole response alone is not enough), be issued by the configured IdP, name this SP as Audience and the ACS URL as Recipient (and Destination, when the response names one), be within its NotBefore/NotOnOrAfter window (60 s of clock skew allowed), and answer an AuthnRequest this server sent (InResponseTo) unless IdP-initiated sign-in is allowed. Each assertion signs in once, on any replica, until it expires. A browser gets a 302 to `/ui/#sso_code=<one-time code>` (exchange it with POST /v1/auth/exchange) or `/ui/#sso_error=<reason>`; a client asking for `application/json` gets the token, or a problem.',
      responses: {
        200: { description: 'Signed in (clients asking for application/json): `{token, expires_at, user}`' },
        302: { description: 'Browsers: to /ui/ with the one-time code, or the failure reason, in the fragment' },
        401: {
          description:
            'The response or its assertion is refused (signature, issuer, audience, recipient, time window, InResponseTo, replay)',
        },
        413: { description: 'The form is over 512 KiB' },
        415: { description: 'Not a form post' },
        ...NOT_CONFIGURED,
      },
      async handle({ req, res }) {
        const saml = configured(s);
        if (!req.is(FORM)) throw new HttpError(415, 'unsupported-media-type', `post the IdP's response as ${FORM}`);
        const form = (req.body ?? {}) as Record<string, unknown>;
        let identity;
        try {
          identity = await saml.identityOf(form.SAMLResponse);
        } catch (err) {
          // A database failure is ours, not the IdP's: the error handler answers it (and logs it, without the form).
          if (!(err instanceof BatonError)) throw err;
          failSsoSignIn(req, res, err, 'saml');
          return undefined;
        }
        await finishSsoSignIn(s, req, res, identity, 'saml');
        return undefined;
      },
    }),
    defineOperation({
      operationId: 'samlMetadata',
      method: 'get',
      path: '/auth/saml/metadata',
      unversioned: true,
      tag: 'auth',
      auth: 'public',
      summary: 'This service provider’s SAML metadata, to register Baton at the identity provider.',
      description:
        'Entity id (BATON_SAML_SP_ENTITY_ID), the assertion consumer service (HTTP-POST, BATON_SAML_ACS_URL), WantAssertionsSigned, and the SP certificate (signing and encryption) when an SP key is configured.',
      responses: {
        200: { description: 'SAML 2.0 metadata XML', contentType: 'application/samlmetadata+xml', schema: z.string() },
        ...NOT_CONFIGURED,
      },
      handle({ res }) {
        const xml = configured(s).metadata();
        res.status(200).type('application/samlmetadata+xml').send(xml);
        return undefined;
      },
    }),
  ];
}
