// OpenID Connect sign-in (authorization code flow with state, nonce and PKCE S256) through passport and
// passport-openidconnect. The library keeps its handshake in express-session by default; here it goes into the
// database (sso_states) through the SSO service, so any replica finishes a sign-in another one started, and each
// handshake is used once. The library has no PKCE and no discovery: both are added here.
import crypto from 'node:crypto';
import { type AuthService, type ExternalIdentity, SsoError, type SsoService, SsoUnavailableError } from '@baton/core';
import type { Request, Response } from 'express';
import passport from 'passport';
import OpenIDConnectStrategy from 'passport-openidconnect';
import { z } from 'zod';
import type { OidcSettings } from '../config/sso-config.js';
import { failSsoSignIn, finishSsoSignIn } from './sso-finish.js';

/** The part of the provider's discovery document Baton uses. */
const Discovery = z.object({
  issuer: z.string(),
  authorization_endpoint: z.url({ protocol: /^https?$/ }),
  token_endpoint: z.url({ protocol: /^https?$/ }),
  userinfo_endpoint: z.url({ protocol: /^https?$/ }).optional(),
});
type Discovery = z.infer<typeof Discovery>;

export interface OidcTimeouts {
  /** how long the discovery document may take (default 5 s) */
  discoveryMs?: number;
  /** how long the code exchange and userinfo together may take at the callback (default 30 s) */
  callbackMs?: number;
}

/** What the state store hands the token request: the PKCE verifier of the handshake the callback's state names. */
interface Handshake {
  codeVerifier?: string;
}

/** Why passport-openidconnect failed a callback, as it says it (fail) or as our store and verify say it. */
interface FailInfo {
  reason?: 'state_mismatch' | 'provider_error';
  message?: string;
}

type Outcome =
  | { kind: 'success'; identity: ExternalIdentity }
  | { kind: 'fail'; info: FailInfo | undefined }
  | { kind: 'error'; err: unknown }
  | { kind: 'responded' };

/** Values of a claim as a list of strings: a list keeps its strings, one string is a list of one, anything else none. */
export function claimValues(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}

/**
 * The claim named `name`: a top-level claim of that name, else a dotted path into nested claims (Keycloak puts roles
 * in `realm_access.roles`).
 */
export function claimAt(claims: Record<string, unknown>, name: string): unknown {
  if (Object.hasOwn(claims, name)) return claims[name];
  let at: unknown = claims;
  for (const part of name.split('.')) {
    if (!at || typeof at !== 'object' || Array.isArray(at) || !Object.hasOwn(at, part)) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

function decodeJwtPayload(jwt: string): Record<string, unknown> {
  const payload = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as unknown;
  return payload && typeof payload === 'object' ? (payload as Record<string, unknown>) : {};
}

const SAFE_TOKEN = /^[A-Za-z0-9_.-]{1,64}$/;
/** A provider's error code, quoted only when it looks like one (it comes from the URL, so from anyone). */
const errorCode = (code: unknown) => (typeof code === 'string' && SAFE_TOKEN.test(code) ? code : 'an error');

/** A network failure talking to the provider (refused, reset, timed out…), as node-oauth passes it on. */
function isNetworkFailure(err: unknown): boolean {
  const cause = (err as { oauthError?: { code?: unknown } } | null)?.oauthError;
  return typeof cause?.code === 'string' && /^E[A-Z_]+$/.test(cause.code);
}

export function createOidcSignIn(
  s: { sso: SsoService; auth: Pick<AuthService, 'issueToken'> },
  settings: OidcSettings,
  timeouts: OidcTimeouts = {},
) {
  const discoveryMs = timeouts.discoveryMs ?? 5000;
  const callbackMs = timeouts.callbackMs ?? 30_000;
  const authenticator = new passport.Authenticator();
  const discoveryUrl = `${settings.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;

  // Discovery is lazy and kept once it worked; until then every sign-in tries again (concurrent ones share a try),
  // so a provider that is down at start does not stop Baton, and sign-in works as soon as it answers.
  let metadata: Discovery | undefined;
  let pending: Promise<Discovery> | undefined;
  async function fetchDiscovery(): Promise<Discovery> {
    let res: globalThis.Response;
    try {
      res = await fetch(discoveryUrl, {
        headers: { accept: 'application/json' },
        redirect: 'error',
        signal: AbortSignal.timeout(discoveryMs),
      });
    } catch {
      throw new SsoUnavailableError(`the OpenID Connect issuer does not answer at ${discoveryUrl}; try again later`);
    }
    const doc = Discovery.safeParse(await res.json().catch(() => undefined));
    if (!res.ok || !doc.success)
      throw new SsoUnavailableError(
        `${discoveryUrl} answered ${res.status} without a usable discovery document; try again later`,
      );
    if (doc.data.issuer !== settings.issuer)
      throw new SsoUnavailableError(
        `${discoveryUrl} names the issuer ${JSON.stringify(doc.data.issuer)}, not BATON_OIDC_ISSUER's ${JSON.stringify(settings.issuer)}`,
      );
    return doc.data;
  }
  async function discover(): Promise<Discovery> {
    if (metadata) return metadata;
    pending ??= fetchDiscovery().finally(() => (pending = undefined));
    metadata = await pending;
    return metadata;
  }

  /** The handshake store passport-openidconnect calls instead of its express-session one. */
  function stateStore(sso: Pick<SsoService, 'saveState' | 'takeState'>, handshake: Handshake) {
    return {
      store(
        _req: Request,
        ctx: { nonce?: string | undefined },
        _appState: unknown,
        _meta: unknown,
        cb: (err: Error | null, handle?: string) => void,
      ) {
        sso.saveState('oidc', { nonce: ctx.nonce, code_verifier: handshake.codeVerifier }).then(
          (handle) => cb(null, handle),
          (err: Error) => cb(err),
        );
      },
      verify(
        _req: Request,
        handle: string | undefined,
        cb: (err: Error | null, ctx?: false | { nonce?: string | undefined }, info?: FailInfo) => void,
      ) {
        if (!handle) return cb(null, false, { reason: 'state_mismatch', message: 'the callback carries no state' });
        sso.takeState('oidc', handle).then(
          (data) => {
            if (!data)
              return cb(null, false, {
                reason: 'state_mismatch',
                message: 'the state is unknown, expired or already used; start the sign-in again',
              });
            handshake.codeVerifier = typeof data.code_verifier === 'string' ? data.code_verifier : undefined;
            cb(null, { nonce: typeof data.nonce === 'string' ? data.nonce : undefined });
          },
          (err: Error) => cb(err),
        );
      },
    };
  }

  /** The identity in the verified ID token and the userinfo answer (which must be about the same subject). */
  function verify(
    _req: Request,
    issuer: string,
    uiProfile: object,
    _idProfile: object,
    _context: object,
    idToken: string | object,
    _accessToken: string | object,
    _refreshToken: string,
    _params: unknown,
    done: (err: Error | null, user?: ExternalIdentity | false, info?: FailInfo) => void,
  ): void {
    const idClaims = typeof idToken === 'string' ? decodeJwtPayload(idToken) : {};
    const userinfo = ((uiProfile as { _json?: unknown } | undefined)?._json ?? {}) as Record<string, unknown>;
    if (userinfo.sub !== undefined && userinfo.sub !== idClaims.sub)
      return done(null, false, {
        reason: 'provider_error',
        message: 'userinfo is about another subject than the ID token',
      });
    const claims = { ...idClaims, ...userinfo };
    const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
    done(null, {
      provider: 'oidc',
      issuer,
      subject: String(idClaims.sub),
      preferredUsername: str(claims.preferred_username),
      email: str(claims.email),
      groups: claimValues(claimAt(claims, settings.roleClaim)),
    });
  }

  /** One strategy per request: passport binds its outcome functions to the instance, and the handshake is per request. */
  function strategyFor(meta: Discovery, handshake: Handshake, challenge?: string) {
    const strategy = new OpenIDConnectStrategy(
      {
        issuer: settings.issuer,
        authorizationURL: meta.authorization_endpoint,
        tokenURL: meta.token_endpoint,
        userInfoURL: meta.userinfo_endpoint ?? '',
        clientID: settings.clientId,
        clientSecret: settings.clientSecret,
        callbackURL: settings.redirectUrl,
        // The library adds `openid` itself.
        scope: settings.scopes.filter((sc) => sc !== 'openid'),
        // Any value turns the nonce on: the library draws a fresh one per sign-in and checks it in the ID token.
        nonce: 'on',
        store: stateStore(s.sso, handshake),
        // The groups usually come from userinfo (providers keep ID tokens small).
        skipUserProfile: !meta.userinfo_endpoint,
        passReqToCallback: true,
      },
      verify,
    );
    if (challenge) strategy.authorizationParams = () => ({ code_challenge: challenge, code_challenge_method: 'S256' });
    // node-oauth builds the token request; the PKCE verifier joins it here.
    const oauth2 = (strategy as unknown as { _oauth2: OAuth2Like })._oauth2;
    const getToken = oauth2.getOAuthAccessToken.bind(oauth2);
    oauth2.getOAuthAccessToken = (code, params, cb) =>
      getToken(code, { ...params, ...(handshake.codeVerifier ? { code_verifier: handshake.codeVerifier } : {}) }, cb);
    // The library would throw (uncaught, in a callback) on a userinfo answer that is not JSON: refuse it here.
    const get = oauth2.get.bind(oauth2);
    oauth2.get = (url, token, cb) =>
      get(url, token, (err, body, res) => {
        if (err) return cb(err, body, res);
        try {
          JSON.parse(String(body));
        } catch {
          return cb({ statusCode: 502, data: 'userinfo is not JSON' }, undefined, res);
        }
        cb(null, body, res);
      });
    return strategy;
  }

  /** Runs the strategy through passport; a redirect is written by passport itself (`responded`). */
  function run(strategy: OpenIDConnectStrategy, req: Request, res: Response): Promise<Outcome> {
    return new Promise<Outcome>((resolve) => {
      res.once('finish', () => resolve({ kind: 'responded' }));
      authenticator.authenticate(
        strategy,
        { session: false },
        (err: unknown, user: ExternalIdentity | false | undefined, info: FailInfo | undefined) => {
          if (err) resolve({ kind: 'error', err });
          else if (user) resolve({ kind: 'success', identity: user });
          else resolve({ kind: 'fail', info });
        },
      )(req, res, (err?: unknown) => resolve({ kind: 'error', err }));
    });
  }

  async function withTimeout<T>(work: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new SsoUnavailableError('the OpenID Connect provider did not answer in time; try again')),
        callbackMs,
      );
    });
    try {
      return await Promise.race([work, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The failure a callback ends with, from what the library said. */
  function failureOf(outcome: Exclude<Outcome, { kind: 'success' } | { kind: 'responded' }>): Error {
    if (outcome.kind === 'fail') {
      const { reason, message } = outcome.info ?? {};
      if (reason) return new SsoError(reason, message ?? 'the sign-in failed');
      if (message && /nonce/i.test(message))
        return new SsoError('nonce_mismatch', 'the ID token does not carry the nonce this sign-in sent');
      return new SsoError('provider_error', message ? `the ID token was refused: ${message}` : 'the sign-in failed');
    }
    const err = outcome.err as { name?: string; code?: unknown } | null;
    if (err instanceof SsoUnavailableError) return err;
    if (isNetworkFailure(err))
      return new SsoUnavailableError('the OpenID Connect provider could not be reached; try again');
    if (err?.name === 'TokenError')
      return new SsoError('provider_error', `the provider refused the code (${errorCode(err.code)})`);
    return new SsoError('provider_error', 'the provider’s answer could not be used');
  }

  /** Takes (and so spends) the handshake a failed callback names, so it cannot be finished later. */
  async function spend(state: unknown): Promise<void> {
    if (typeof state === 'string' && state) await s.sso.takeState('oidc', state);
  }

  return {
    /** GET /auth/oidc/login: a 302 to the provider with state, nonce and PKCE; 503 while the provider is unreachable. */
    async login(req: Request, res: Response): Promise<void> {
      const meta = await discover();
      const handshake: Handshake = { codeVerifier: crypto.randomBytes(32).toString('base64url') };
      const challenge = crypto.createHash('sha256').update(handshake.codeVerifier!).digest('base64url');
      res.setHeader('Cache-Control', 'no-store');
      const outcome = await run(strategyFor(meta, handshake, challenge), req, res);
      if (outcome.kind === 'error') throw outcome.err;
      if (outcome.kind !== 'responded') throw new Error('OpenID Connect login did not redirect');
    },

    /** GET /auth/oidc/callback: the provider's answer → the token (API client) or a one-time code (browser). */
    async callback(req: Request, res: Response): Promise<void> {
      const q = req.query as Record<string, unknown>;
      try {
        if (q.error !== undefined) {
          await spend(q.state);
          throw new SsoError(
            q.error === 'access_denied' ? 'access_denied' : 'provider_error',
            `the provider answered ${errorCode(q.error)}`,
          );
        }
        // RFC 9207: a provider that names itself must be ours (an answer from another one is a mix-up).
        if (q.iss !== undefined && q.iss !== settings.issuer) {
          await spend(q.state);
          throw new SsoError('provider_error', 'the callback comes from another issuer (iss)');
        }
        if (typeof q.code !== 'string' || !q.code) {
          await spend(q.state);
          throw new SsoError('provider_error', 'the callback carries neither a code nor an error');
        }
        const meta = await discover();
        const outcome = await withTimeout(run(strategyFor(meta, {}), req, res));
        if (outcome.kind === 'responded') return;
        if (outcome.kind !== 'success') throw failureOf(outcome);
        await finishSsoSignIn(s, req, res, outcome.identity, 'oidc');
      } catch (err) {
        failSsoSignIn(req, res, err, 'oidc');
      }
    },
  };
}
export type OidcSignIn = ReturnType<typeof createOidcSignIn>;

/** The two node-oauth methods wrapped above. */
interface OAuth2Like {
  getOAuthAccessToken(
    code: string,
    params: Record<string, string>,
    cb: (err: unknown, accessToken?: string, refreshToken?: string, results?: unknown) => void,
  ): void;
  get(url: string, token: string, cb: (err: unknown, body?: unknown, res?: unknown) => void): void;
}
