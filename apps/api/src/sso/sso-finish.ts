import type { SsoFailure } from '@baton/contracts';
import { type AuthService, BatonError, type ExternalIdentity, type SsoService, ssoFailureOf } from '@baton/core';
import type { Request, Response } from 'express';
import { sendProblem } from '../http/problem.js';

/** Where a browser lands after a single sign-on: the UI, which reads the fragment. */
export const SSO_LANDING = '/ui/';

/**
 * Who is at the other end of a sign-in callback. A browser arrives by the provider's redirect and asks for
 * `text/html` (or anything); an API client (a script driving the flow itself) asks for `application/json` and gets
 * the token in the body.
 */
export function wantsJson(req: Request): boolean {
  return req.accepts(['text/html', 'application/json']) === 'application/json';
}

/** Nothing of a sign-in answer may be kept by a cache or passed on as a Referer. */
function noTraces(res: Response): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Referrer-Policy', 'no-referrer');
}

/**
 * Ends a sign-in whose identity the provider proved. A browser gets a 302 to `/ui/#sso_code=<one-time code>`: the
 * code rides in the fragment, which browsers send to no server and put in no Referer, and only exchanges once
 * (POST /v1/auth/exchange). An API client gets `{token, expires_at, user}` at once. A refusal ends like any failure.
 */
export async function finishSsoSignIn(
  s: { sso: Pick<SsoService, 'signIn' | 'createCode'>; auth: Pick<AuthService, 'issueToken'> },
  req: Request,
  res: Response,
  identity: ExternalIdentity,
  method: 'oidc' | 'saml',
): Promise<void> {
  const address = req.ip ?? 'unknown';
  try {
    const user = await s.sso.signIn(identity, address);
    noTraces(res);
    if (wantsJson(req)) {
      const issued = await s.auth.issueToken(user.id, method, address);
      res.status(200).json({ ...issued, user });
    } else {
      const code = await s.sso.createCode(user.id, method);
      res.redirect(302, `${SSO_LANDING}#sso_code=${encodeURIComponent(code)}`);
    }
  } catch (err) {
    failSsoSignIn(req, res, err, method);
  }
}

const NOT_DIAGNOSED = 'the sign-in could not be completed';

/**
 * Ends a failed sign-in, never with a 500. A browser gets a 302 to `/ui/#sso_error=<short code>` (the codes of
 * SSO_FAILURES); an API client gets problem+json: 503 when the provider is unreachable, 401 otherwise, of type
 * `urn:baton:problem:sso-<code>`.
 */
export function failSsoSignIn(req: Request, res: Response, err: unknown, method: 'oidc' | 'saml'): void {
  if (res.headersSent) return;
  const reason: SsoFailure = ssoFailureOf(err);
  noTraces(res);
  if (!wantsJson(req)) {
    res.redirect(302, `${SSO_LANDING}#sso_error=${reason}`);
    return;
  }
  // Our own errors say what went wrong in safe words; anything else (a library's, a driver's) is not echoed.
  const detail = err instanceof BatonError ? err.message : NOT_DIAGNOSED;
  sendProblem(
    res,
    reason === 'unavailable' ? 503 : 401,
    `sso-${reason.replace(/_/g, '-')}`,
    `${method} sign-in failed (${reason}): ${detail}`,
  );
}
