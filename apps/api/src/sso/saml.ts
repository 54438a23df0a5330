// SAML 2.0 sign-in (issue 12, "SAML") with @node-saml/passport-saml: the AuthnRequest redirect, the checks of the
// IdP's response, and the SP metadata. node-saml checks the signature (with the configured IdP certificates only),
// the audience, the time window and InResponseTo; this file adds what it leaves out: the assertion's issuer, the
// Recipient and Destination (the ACS URL), and one use per assertion id across every replica.
import { DOMParser } from '@xmldom/xmldom';
import {
  type CacheProvider,
  type Profile,
  SamlStatusError,
  Strategy,
  ValidateInResponseTo,
} from '@node-saml/passport-saml';
import passport from 'passport';
import { type Clock, type ExternalIdentity, iso, SsoError } from '@baton/core';
import type { SsoAssertionRepo, SsoStateRepo } from '@baton/db';
import type { SamlSettings } from '../config/saml-config.js';

/** How far the IdP's clock may be off ours when judging NotBefore and NotOnOrAfter (the issue allows up to 60 s). */
export const SAML_CLOCK_SKEW_MS = 60_000;
/** How long a sign-in started here may take at the IdP before its AuthnRequest id is forgotten. */
export const SAML_REQUEST_TTL_MS = 10 * 60_000;
/** Purge used assertion ids at most this often (per process). */
const PURGE_INTERVAL_MS = 60_000;

const ASSERTION_NS = 'urn:oasis:names:tc:SAML:2.0:assertion';
const PROTOCOL_NS = 'urn:oasis:names:tc:SAML:2.0:protocol';
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';
const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
/** Attribute names (Name or FriendlyName) that carry a username or an e-mail address, in order of preference. */
const USERNAME_ATTRIBUTES = ['username', 'uid', 'preferred_username', 'urn:oid:0.9.2342.19200300.100.1.1'];
const EMAIL_ATTRIBUTES = [
  'email',
  'mail',
  'urn:oid:0.9.2342.19200300.100.1.3',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
];
const STRATEGY = 'saml';
/** Longest assertion id remembered; longer ones are refused (no IdP needs more than a few dozen characters). */
const MAX_ASSERTION_ID = 512;

export interface SamlSignInDeps {
  ssoStates: Pick<SsoStateRepo, 'insert' | 'find' | 'take' | 'deleteExpired'>;
  ssoAssertions: Pick<SsoAssertionRepo, 'claim' | 'deleteExpired'>;
  clock: Clock;
}

/** A failure of our own database behind node-saml's request-id cache: not the IdP's fault, so not a 401. */
class StateStoreError extends Error {
  constructor(override readonly cause: unknown) {
    super('the SAML request-id store failed');
  }
}

/**
 * node-saml's cache of AuthnRequest ids, kept in `sso_states`, so the replica that receives the response finds the
 * request any replica sent. Values are the request's IssueInstant.
 */
function requestIdCache(deps: SamlSignInDeps): CacheProvider {
  const guard = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw new StateStoreError(err);
    }
  };
  return {
    saveAsync: (key, value) =>
      guard(async () => {
        const now = deps.clock();
        await deps.ssoStates.insert({
          id: key,
          provider: 'saml',
          data: JSON.stringify({ issued_at: value }),
          created_at: iso(now),
          expires_at: iso(new Date(now.getTime() + SAML_REQUEST_TTL_MS)),
        });
        return { value, createdAt: now.getTime() };
      }),
    getAsync: (key) =>
      guard(async () => {
        const row = await deps.ssoStates.find(key);
        if (!row || row.provider !== 'saml' || row.expires_at <= iso(deps.clock())) return null;
        return (JSON.parse(row.data) as { issued_at: string }).issued_at;
      }),
    removeAsync: (key) =>
      guard(async () => {
        if (key === null) return null;
        // Single use: the first replica to take it wins; the assertion-id claim refuses a concurrent second anyway.
        const row = await deps.ssoStates.take(key, 'saml', iso(deps.clock()));
        return row ? key : null;
      }),
  };
}

type Outcome = { redirect: string } | { profile: Profile } | { error: unknown };

/**
 * Runs the passport strategy on a request of our own making, holding exactly what it should see (never the real
 * request's query, which would send it down its logout paths), and collects how it ended.
 */
function runStrategy(
  authenticator: passport.Authenticator,
  fields: { body: Record<string, string> },
): Promise<Outcome> {
  return new Promise<Outcome>((resolve) => {
    let location: string | undefined;
    const req = { query: {}, body: fields.body, headers: {}, url: '/' };
    const res = {
      statusCode: 200,
      setHeader(name: string, value: string) {
        if (name.toLowerCase() === 'location') location = value;
      },
      end() {
        resolve(
          location ? { redirect: location } : { error: new Error('the SAML strategy answered without a redirect') },
        );
      },
    };
    const handler = authenticator.authenticate(
      STRATEGY,
      { session: false },
      (err: unknown, user: Profile | false | undefined) =>
        resolve(
          err ? { error: err } : user ? { profile: user } : { error: new Error('the response holds no assertion') },
        ),
    ) as (req: unknown, res: unknown, next: (err?: unknown) => void) => void;
    // pass(): the strategy found a logout message, not a sign-in.
    handler(req, res, (err?: unknown) => resolve({ error: err ?? new Error('not a sign-in response') }));
  });
}

/** A short reason for node-saml's refusal; its own messages may quote what the response carried. */
function refusal(err: unknown): SsoError {
  if (err instanceof SsoError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const says = (re: RegExp) => re.test(message);
  // The IdP's own status (unsigned, so only its first words are echoed): it did not sign the person in.
  if (err instanceof SamlStatusError)
    return new SsoError('access_denied', `the identity provider did not sign the person in: ${message.slice(0, 120)}`);
  if (says(/InResponseTo/i))
    return new SsoError(
      'state_mismatch',
      'the response does not answer a sign-in this server started, or that sign-in was already finished (InResponseTo)',
    );
  if (says(/signature/i))
    return new SsoError(
      'invalid_assertion',
      'the assertion is not signed by the configured identity provider certificate',
    );
  // node-saml judges a bearer confirmation by its time window only: none valid means none is valid now.
  if (says(/expired|not yet valid|too old|no valid subject confirmation/i))
    return new SsoError('invalid_assertion', 'the assertion is outside its validity window (NotBefore/NotOnOrAfter)');
  if (says(/audience/i))
    return new SsoError('invalid_assertion', 'the assertion is meant for another service provider (Audience)');
  return new SsoError('invalid_assertion', 'the SAML response is malformed or holds no usable assertion');
}

const elements = (parent: Element | Document, localName: string): Element[] =>
  Array.from(parent.getElementsByTagNameNS(ASSERTION_NS, localName));

function childElements(parent: Element, localName: string): Element[] {
  const out: Element[] = [];
  for (let n = parent.firstChild; n; n = n.nextSibling)
    if (n.nodeType === 1 && (n as Element).namespaceURI === ASSERTION_NS && (n as Element).localName === localName)
      out.push(n as Element);
  return out;
}

function parseXml(xml: string): Document | undefined {
  let failed = false;
  const doc = new DOMParser({
    errorHandler: { warning: () => {}, error: () => (failed = true), fatalError: () => (failed = true) },
  }).parseFromString(xml, 'application/xml');
  return failed || !doc?.documentElement ? undefined : doc;
}

const instant = (value: string | null): number | undefined => {
  if (!value) return undefined;
  const t = Date.parse(value);
  return Number.isNaN(t) ? undefined : t;
};

/** What Baton reads from an assertion whose signature node-saml verified. */
interface VerifiedAssertion {
  id: string;
  issuer: string;
  nameId: string;
  nameIdFormat: string | undefined;
  /** the latest NotOnOrAfter among its conditions and its bearer confirmation: no replica accepts it after this */
  expiresAt: number;
  attributes: Map<string, string[]>;
}

/**
 * Reads the verified assertion and applies the checks node-saml leaves out: the issuer is the configured IdP, a
 * bearer confirmation names our ACS URL as Recipient and is within its time window, and the assertion expires.
 */
function readAssertion(
  xml: string,
  settings: SamlSettings,
  now: number,
  inResponseTo: string | undefined,
): VerifiedAssertion {
  const bad = (message: string) => new SsoError('invalid_assertion', message);
  const doc = parseXml(xml);
  const assertion = doc?.documentElement;
  if (!assertion || assertion.namespaceURI !== ASSERTION_NS || assertion.localName !== 'Assertion')
    throw bad('the SAML response holds no usable assertion');
  const id = assertion.getAttribute('ID') ?? '';
  if (!id || id.length > MAX_ASSERTION_ID) throw bad('the assertion has no usable ID');
  const issuer = childElements(assertion, 'Issuer')[0]?.textContent?.trim() ?? '';
  if (!issuer) throw bad('the assertion names no Issuer');
  if (settings.idp.entityId !== undefined && issuer !== settings.idp.entityId)
    throw bad('the assertion was issued by another identity provider (Issuer)');
  const subject = childElements(assertion, 'Subject')[0];
  const nameIdElement = subject && childElements(subject, 'NameID')[0];
  const nameId = nameIdElement?.textContent?.trim() ?? '';
  if (!nameId) throw bad('the assertion names no subject (NameID)');

  // A bearer confirmation for our ACS URL, valid now (node-saml checks these only when it checks InResponseTo).
  const confirmations = subject ? childElements(subject, 'SubjectConfirmation') : [];
  let confirmedUntil: number | undefined;
  let refused =
    'the assertion is not addressed to this ACS URL (no bearer SubjectConfirmationData with this Recipient)';
  for (const confirmation of confirmations) {
    if (confirmation.getAttribute('Method') !== BEARER) continue;
    const data = childElements(confirmation, 'SubjectConfirmationData')[0];
    if (!data || data.getAttribute('Recipient') !== settings.acsUrl) continue;
    const notOnOrAfter = instant(data.getAttribute('NotOnOrAfter'));
    const notBefore = instant(data.getAttribute('NotBefore'));
    const confirms = data.getAttribute('InResponseTo');
    if (
      notOnOrAfter === undefined ||
      now - SAML_CLOCK_SKEW_MS >= notOnOrAfter ||
      (notBefore !== undefined && now + SAML_CLOCK_SKEW_MS < notBefore)
    )
      refused = 'the assertion is outside its validity window (SubjectConfirmationData NotOnOrAfter)';
    // An unasked response (IdP-initiated, when allowed) must not confirm some request it does not name itself.
    else if (confirms && confirms !== inResponseTo)
      refused = 'the assertion confirms another sign-in than the response answers (InResponseTo)';
    else {
      confirmedUntil = notOnOrAfter;
      break;
    }
  }
  if (confirmedUntil === undefined) throw bad(refused);
  const conditionsUntil = instant(childElements(assertion, 'Conditions')[0]?.getAttribute('NotOnOrAfter') ?? null);

  const attributes = new Map<string, string[]>();
  for (const attribute of elements(assertion, 'Attribute')) {
    const values = childElements(attribute, 'AttributeValue')
      .map((v) => v.textContent?.trim() ?? '')
      .filter((v) => v !== '');
    for (const name of [attribute.getAttribute('Name'), attribute.getAttribute('FriendlyName')])
      if (name) attributes.set(name, [...(attributes.get(name) ?? []), ...values]);
  }
  return {
    id,
    issuer,
    nameId,
    nameIdFormat: nameIdElement?.getAttribute('Format') ?? undefined,
    expiresAt: Math.max(confirmedUntil, conditionsUntil ?? confirmedUntil),
    attributes,
  };
}

/**
 * The posted response, read before node-saml sees it: a SAML protocol Response, whose Destination, when it names
 * one, is our ACS URL. Anything else is refused here with a reason that says so.
 */
function checkResponse(samlResponse: string, acsUrl: string): void {
  const root = parseXml(Buffer.from(samlResponse, 'base64').toString('utf8'))?.documentElement;
  if (!root || root.namespaceURI !== PROTOCOL_NS || root.localName !== 'Response')
    throw new SsoError('invalid_assertion', 'the SAMLResponse is not a SAML 2.0 Response document');
  const destination = root.getAttribute('Destination');
  if (destination && destination !== acsUrl)
    throw new SsoError('invalid_assertion', 'the response is addressed to another ACS URL (Destination)');
}

const BASE64 = /^[A-Za-z0-9+/\r\n]+={0,2}[\r\n]*$/;

/** The SAML service provider: AuthnRequest redirects, response checks, metadata. */
export function createSamlSignIn(settings: SamlSettings, deps: SamlSignInDeps) {
  const keys = settings.spKeyPair;
  const strategy = new Strategy(
    {
      name: STRATEGY,
      entryPoint: settings.idp.ssoUrl,
      issuer: settings.spEntityId,
      callbackUrl: settings.acsUrl,
      audience: settings.spEntityId,
      idpCert: settings.idp.certs,
      // The assertion itself must carry a valid signature of the IdP; a signature on the whole response is optional.
      wantAssertionsSigned: true,
      wantAuthnResponseSigned: false,
      acceptedClockSkewMs: SAML_CLOCK_SKEW_MS,
      validateInResponseTo: settings.allowIdpInitiated ? ValidateInResponseTo.ifPresent : ValidateInResponseTo.always,
      requestIdExpirationPeriodMs: SAML_REQUEST_TTL_MS,
      cacheProvider: requestIdCache(deps),
      // Let the IdP choose the NameID format and how the person authenticates (MFA, Kerberos…): asking for one
      // makes some IdPs refuse.
      identifierFormat: null,
      disableRequestedAuthnContext: true,
      signatureAlgorithm: 'sha256',
      digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
      ...(keys ? { privateKey: keys.privateKey, publicCert: keys.cert, decryptionPvk: keys.privateKey } : {}),
    },
    (profile: Profile | null, done: (err: Error | null, user?: Record<string, unknown>) => void) =>
      done(null, profile ?? undefined),
    // Single logout is not offered (Baton's tokens are not IdP sessions); the ACS never takes this path.
    (_profile: Profile | null, done: (err: Error | null) => void) => done(new Error('SAML logout is not supported')),
  );
  const authenticator = new passport.Passport();
  authenticator.use(STRATEGY, strategy);
  let lastPurge = 0;

  /**
   * Housekeeping, at most once a minute per process (any replica's purge serves all): used assertion ids past their
   * expiry, and handshakes nobody finished (a login costs a row, so they must not pile up).
   */
  async function purgeExpired(now: Date): Promise<void> {
    if (now.getTime() - lastPurge < PURGE_INTERVAL_MS) return;
    lastPurge = now.getTime();
    await deps.ssoAssertions.deleteExpired(iso(now));
    await deps.ssoStates.deleteExpired(iso(now));
  }

  return {
    settings,

    /** The IdP URL (HTTP-Redirect binding) carrying a fresh AuthnRequest, signed when an SP key is configured. */
    async loginUrl(): Promise<string> {
      await purgeExpired(deps.clock());
      const outcome = await runStrategy(authenticator, { body: {} });
      if ('redirect' in outcome) return outcome.redirect;
      const err = 'error' in outcome ? outcome.error : undefined;
      throw err instanceof StateStoreError ? err.cause : err;
    },

    /**
     * The identity an IdP's POSTed response proves, after every check; throws SsoError (401) when any fails. The
     * assertion's id is claimed last: only an assertion that passed everything else uses it up.
     */
    async identityOf(samlResponse: unknown): Promise<ExternalIdentity> {
      if (typeof samlResponse !== 'string' || samlResponse === '')
        throw new SsoError('invalid_assertion', 'no SAMLResponse field in the form');
      if (!BASE64.test(samlResponse)) throw new SsoError('invalid_assertion', 'the SAMLResponse is not base64');
      checkResponse(samlResponse, settings.acsUrl);
      const outcome = await runStrategy(authenticator, { body: { SAMLResponse: samlResponse } });
      if ('error' in outcome) {
        if (outcome.error instanceof StateStoreError) throw outcome.error.cause;
        throw refusal(outcome.error);
      }
      if (!('profile' in outcome)) throw new SsoError('invalid_assertion', 'the SAML response holds no assertion');
      const profile = outcome.profile;
      const now = deps.clock();
      const assertionXml = profile.getAssertionXml?.();
      if (!assertionXml) throw new SsoError('invalid_assertion', 'the SAML response holds no usable assertion');
      const inResponseTo = typeof profile.inResponseTo === 'string' ? profile.inResponseTo : undefined;
      const assertion = readAssertion(assertionXml, settings, now.getTime(), inResponseTo);

      // node-saml forgets the request id itself, except when the confirmation carries no InResponseTo: then here.
      if (inResponseTo) await deps.ssoStates.take(inResponseTo, 'saml', iso(now));
      await purgeExpired(now);
      // Kept until no replica would accept it any more (its NotOnOrAfter plus the clock skew we allow).
      if (!(await deps.ssoAssertions.claim(assertion.id, iso(new Date(assertion.expiresAt + SAML_CLOCK_SKEW_MS)))))
        throw new SsoError('invalid_assertion', 'this assertion was already used to sign in (replay)');

      const first = (names: string[]) => {
        for (const name of names) {
          const value = assertion.attributes.get(name)?.[0];
          if (value) return value;
        }
        return undefined;
      };
      return {
        provider: 'saml',
        issuer: assertion.issuer,
        subject: assertion.nameId,
        preferredUsername: first(USERNAME_ATTRIBUTES),
        email: first(EMAIL_ATTRIBUTES) ?? (assertion.nameIdFormat === EMAIL_FORMAT ? assertion.nameId : undefined),
        groups: [...new Set(assertion.attributes.get(settings.groupsAttribute) ?? [])],
      };
    },

    /** This service provider's metadata: entity id, ACS URL (HTTP-POST), and its certificate when it has a key. */
    metadata(): string {
      return strategy.generateServiceProviderMetadata(keys?.cert ?? null, keys?.cert ?? null);
    },
  };
}
export type SamlSignIn = ReturnType<typeof createSamlSignIn>;
