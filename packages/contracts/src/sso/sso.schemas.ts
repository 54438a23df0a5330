import { z } from 'zod';
import type { LoginResponse } from '../auth/auth.schemas.js';

/** What a finished sign-in answers (POST /v1/auth/login, POST /v1/auth/exchange, an API client's SSO callback). */
export type SignedIn = z.infer<typeof LoginResponse>;

/** An e-mail address a provider vouches for is kept only when it is one (the users API's own rule). */
export const IdentityEmail = z.email().max(254);

/** `POST /v1/auth/exchange`: the one-time code a browser got at the end of a single sign-on. */
export const SsoExchangeBody = z.strictObject({
  code: z
    .string()
    .min(1)
    .max(256)
    .meta({ description: 'the one-time code from `/ui/#sso_code=…` (single use, ≤ 60 s)' }),
});
export type SsoExchangeBody = z.infer<typeof SsoExchangeBody>;

/** Which sign-in methods this server offers, so the UI shows only the buttons that work. */
export const AuthMethods = z
  .object({
    password: z.boolean().meta({ description: 'username and password (POST /v1/auth/login)' }),
    oidc: z.boolean().meta({ description: 'OpenID Connect (GET /auth/oidc/login)' }),
    saml: z.boolean().meta({ description: 'SAML 2.0 (GET /auth/saml/login)' }),
  })
  .meta({ id: 'AuthMethods' });
export type AuthMethods = z.infer<typeof AuthMethods>;

/**
 * Why a single sign-on failed: the short code a browser gets in `/ui/#sso_error=<code>` (and the problem's
 * `detail` starts with it for API clients).
 */
export const SSO_FAILURES = [
  /** the callback's state is missing, unknown, expired or already used (a replayed callback) */
  'state_mismatch',
  /** the ID token's nonce is not the one this sign-in sent */
  'nonce_mismatch',
  /** the person declined at the provider */
  'access_denied',
  /** the provider answered with an error, or its answer could not be used (token exchange, ID token checks) */
  'provider_error',
  /** the provider is unreachable or not ready (503 for API clients) */
  'unavailable',
  /** no usable username: none of preferred_username, email, subject fits Baton's username rules */
  'invalid_username',
  /** a local user of that username exists and is not linked to this identity: refused, not merged */
  'username_taken',
  /** the SAML assertion was refused (signature, audience, recipient, time window, replay…) */
  'invalid_assertion',
] as const;
export const SsoFailure = z.enum(SSO_FAILURES);
export type SsoFailure = z.infer<typeof SsoFailure>;

/**
 * `GET /auth/oidc/callback`: what the provider sends back. Providers add parameters of their own
 * (`session_state`…); they are ignored.
 */
export const OidcCallbackQuery = z.object({
  code: z.string().max(4096).optional().meta({ description: 'authorization code' }),
  state: z.string().max(512).optional().meta({ description: 'the state this sign-in sent' }),
  iss: z.string().max(2048).optional().meta({ description: 'issuer (RFC 9207), checked when present' }),
  error: z.string().max(256).optional(),
  error_description: z.string().max(2048).optional(),
  error_uri: z.string().max(2048).optional(),
});
