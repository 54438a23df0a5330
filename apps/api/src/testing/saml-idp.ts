// A real SAML identity provider for tests: samlify (signing with xml-crypto, schema checks with xmllint) behind a
// loopback HTTP server. It reads the AuthnRequest the SP redirects to it (checking its signature when the SP signs),
// and answers with the auto-posting form a browser would get, carrying a signed response. Tests can also build
// responses directly, with any field changed (expired, another audience, another recipient…), or signed by a key
// the SP does not trust. Keys are made with openssl in a temporary directory at test time; none is committed.
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as validator from '@authenio/samlify-node-xmllint';
import * as samlify from 'samlify';

/**
 * Schema checks with xmllint. node-xmllint (emscripten) leaves things behind at every call: an uncaughtException
 * handler that rethrows, a process.exit() on stdout's next 'drain', and a blank console line; the call is synchronous,
 * so they are removed (and the line silenced) right after it.
 */
samlify.setSchemaValidator({
  validate(xml: string) {
    const drains = process.stdout.listeners('drain');
    const handlers = process.listeners('uncaughtException');
    const log = console.log;
    console.log = () => {};
    try {
      return validator.validate(xml);
    } finally {
      console.log = log;
      for (const l of process.stdout.listeners('drain'))
        if (!drains.includes(l)) process.stdout.removeListener('drain', l as (...args: unknown[]) => void);
      for (const l of process.listeners('uncaughtException'))
        if (!handlers.includes(l)) process.removeListener('uncaughtException', l);
    }
  },
});

export interface KeyPair {
  key: string;
  cert: string;
  keyFile: string;
  certFile: string;
}

/** A fresh RSA key and its self-signed certificate, as PEM text and as files in `dir` (openssl). */
export function makeKeyPair(dir: string, name: string): KeyPair {
  const keyFile = path.join(dir, `${name}.key.pem`);
  const certFile = path.join(dir, `${name}.cert.pem`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-sha256',
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return { key: fs.readFileSync(keyFile, 'utf8'), cert: fs.readFileSync(certFile, 'utf8'), keyFile, certFile };
}

/** Who the IdP says signed in. */
export interface SamlTestUser {
  nameId: string;
  nameIdFormat?: string;
  /** attribute name → values (several values: a multi-valued attribute) */
  attributes?: Record<string, string[]>;
}

/** Fields of the response as the IdP would write them; `null` leaves an optional one out. */
export interface ResponseFields {
  inResponseTo?: string | null;
  /** the bearer confirmation's InResponseTo (default: the response's) */
  subjectInResponseTo?: string | null;
  destination?: string | null;
  recipient?: string;
  audience?: string;
  issuer?: string;
  assertionId?: string;
  notBefore?: Date;
  notOnOrAfter?: Date;
  subjectNotOnOrAfter?: Date;
  issueInstant?: Date;
}

export interface ResponseOptions extends ResponseFields {
  /** signed by a key the SP was not configured with (same entity id) */
  rogueSignature?: boolean;
  /** the assertion encrypted to the SP's encryption certificate from its metadata */
  encrypt?: boolean;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const attr = (name: string, value: string | null | undefined) =>
  value === null || value === undefined ? '' : ` ${name}="${esc(value)}"`;
const newId = () => `_${crypto.randomBytes(16).toString('hex')}`;

function responseXml(
  user: SamlTestUser,
  f: Required<Omit<ResponseFields, 'inResponseTo' | 'subjectInResponseTo' | 'destination'>> & ResponseFields,
) {
  const attributes = Object.entries(user.attributes ?? {})
    .map(
      ([name, values]) =>
        `<saml:Attribute Name="${esc(name)}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic">${values
          .map((v) => `<saml:AttributeValue xsi:type="xs:string">${esc(v)}</saml:AttributeValue>`)
          .join('')}</saml:Attribute>`,
    )
    .join('');
  const now = f.issueInstant.toISOString();
  return (
    `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion"` +
    ` ID="${newId()}" Version="2.0" IssueInstant="${now}"${attr('Destination', f.destination)}${attr('InResponseTo', f.inResponseTo)}>` +
    `<saml:Issuer>${esc(f.issuer)}</saml:Issuer>` +
    `<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>` +
    `<saml:Assertion xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${esc(f.assertionId)}" Version="2.0" IssueInstant="${now}">` +
    `<saml:Issuer>${esc(f.issuer)}</saml:Issuer>` +
    `<saml:Subject><saml:NameID${attr('Format', user.nameIdFormat ?? 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent')}>${esc(user.nameId)}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="${f.subjectNotOnOrAfter.toISOString()}" Recipient="${esc(f.recipient)}"${attr('InResponseTo', f.subjectInResponseTo === undefined ? f.inResponseTo : f.subjectInResponseTo)}/></saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${f.notBefore.toISOString()}" NotOnOrAfter="${f.notOnOrAfter.toISOString()}"><saml:AudienceRestriction><saml:Audience>${esc(f.audience)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${now}" SessionIndex="${newId()}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
    (attributes ? `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>` : '') +
    `</saml:Assertion></samlp:Response>`
  );
}

/** The fields of the auto-posting form the IdP answers a browser with. */
export function postedForm(html: string): { action: string; SAMLResponse: string; RelayState?: string } {
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];
  const action = /action="([^"]*)"/.exec(html)?.[1];
  const SAMLResponse = field('SAMLResponse');
  if (!action || !SAMLResponse) throw new Error(`not an IdP form: ${html.slice(0, 200)}`);
  const RelayState = field('RelayState');
  return { action, SAMLResponse, ...(RelayState !== undefined ? { RelayState } : {}) };
}

export interface TestIdp {
  entityId: string;
  ssoUrl: string;
  /** the IdP's signing certificate (PEM) and its file */
  cert: string;
  certFile: string;
  /** IdP metadata XML, and a file holding it */
  metadataXml: string;
  metadataFile: string;
  /** a directory for the test's own files (SP keys…), removed by close() */
  dir: string;
  /** Makes the IdP know the SP (from the SP's metadata XML, as an operator would register it). */
  trust(spMetadataXml: string): void;
  /** Who the next sign-ins at the SSO URL are (until changed). */
  signInAs(user: SamlTestUser): void;
  /** The AuthnRequests the SSO URL received, newest last: their ids and whether their signature was checked. */
  requests: Array<{ id: string; signed: boolean }>;
  /** A base64 SAMLResponse for `user`, with any field changed; InResponseTo left out unless given. */
  respond(user: SamlTestUser, options?: ResponseOptions): Promise<string>;
  close(): Promise<void>;
}

/** Starts the IdP on 127.0.0.1 (a random port). `wantSignedRequests`: refuse AuthnRequests without a valid SP signature. */
export async function startTestIdp(opts: { wantSignedRequests?: boolean } = {}): Promise<TestIdp> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-saml-idp-'));
  const keys = makeKeyPair(dir, 'idp');
  const rogueKeys = makeKeyPair(dir, 'rogue');
  let sp: samlify.ServiceProviderInstance | undefined;
  let currentUser: SamlTestUser = { nameId: 'nobody' };
  const requests: TestIdp['requests'] = [];

  const server = http.createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      res.writeHead(400, { 'content-type': 'text/plain' }).end(`IdP refused: ${String(err)}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const entityId = `http://127.0.0.1:${port}/metadata`;
  const ssoUrl = `http://127.0.0.1:${port}/sso`;

  const idpSettings = (k: { key: string; cert: string }, encrypt = false) =>
    samlify.IdentityProvider({
      entityID: entityId,
      privateKey: k.key,
      signingCert: k.cert,
      wantAuthnRequestsSigned: opts.wantSignedRequests ?? false,
      singleSignOnService: [{ Binding: samlify.Constants.namespace.binding.redirect, Location: ssoUrl }],
      singleLogoutService: [{ Binding: samlify.Constants.namespace.binding.redirect, Location: `${ssoUrl}/logout` }],
      requestSignatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
      isAssertionEncrypted: encrypt,
      dataEncryptionAlgorithm: 'http://www.w3.org/2001/04/xmlenc#aes256-cbc',
      keyEncryptionAlgorithm: 'http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p',
    } as Parameters<typeof samlify.IdentityProvider>[0]);
  const idp = idpSettings(keys);
  const encryptingIdp = idpSettings(keys, true);
  const rogueIdp = idpSettings(rogueKeys);
  const metadataXml = idp.getMetadata();
  const metadataFile = path.join(dir, 'idp-metadata.xml');
  fs.writeFileSync(metadataFile, metadataXml);

  function knownSp(): samlify.ServiceProviderInstance {
    if (!sp) throw new Error('the test IdP does not know the SP yet: call trust(spMetadataXml)');
    return sp;
  }
  const acsOf = (s: samlify.ServiceProviderInstance) => s.entityMeta.getAssertionConsumerService('post') as string;

  async function respond(user: SamlTestUser, o: ResponseOptions = {}): Promise<string> {
    const s = knownSp();
    const now = new Date();
    const later = new Date(now.getTime() + 5 * 60_000);
    const fields = {
      inResponseTo: o.inResponseTo,
      subjectInResponseTo: o.subjectInResponseTo,
      destination: o.destination === undefined ? acsOf(s) : o.destination,
      recipient: o.recipient ?? acsOf(s),
      audience: o.audience ?? (s.entityMeta.getEntityID() as string),
      issuer: o.issuer ?? entityId,
      assertionId: o.assertionId ?? newId(),
      notBefore: o.notBefore ?? now,
      notOnOrAfter: o.notOnOrAfter ?? later,
      subjectNotOnOrAfter: o.subjectNotOnOrAfter ?? o.notOnOrAfter ?? later,
      issueInstant: o.issueInstant ?? now,
    };
    const signer = o.rogueSignature ? rogueIdp : o.encrypt ? encryptingIdp : idp;
    // The request info only feeds samlify's own template; ours (customTagReplacement) carries InResponseTo itself.
    const built = await signer.createLoginResponse(
      s,
      { extract: {} },
      'post',
      {},
      {
        customTagReplacement: () => ({ id: newId(), context: responseXml(user, fields) }),
      },
    );
    return (built as { context: string }).context;
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', ssoUrl);
    if (url.pathname === '/metadata') {
      res.writeHead(200, { 'content-type': 'application/samlmetadata+xml' }).end(metadataXml);
      return;
    }
    if (url.pathname !== '/sso' || req.method !== 'GET') {
      res.writeHead(404).end();
      return;
    }
    const s = knownSp();
    // The signed octets are the raw query parameters, in this order, as they came (saml-bindings §3.4.4.1).
    const raw = new Map((url.search.slice(1).split('&') ?? []).map((p) => [p.split('=')[0]!, p] as const));
    const octetString = ['SAMLRequest', 'RelayState', 'SigAlg']
      .map((k) => raw.get(k))
      .filter((p): p is string => p !== undefined)
      .join('&');
    const query = Object.fromEntries(url.searchParams);
    const parsed = await idp.parseLoginRequest(s, 'redirect', { query, octetString });
    const requestId = (parsed.extract as { request?: { id?: string } }).request?.id;
    if (!requestId) throw new Error('the AuthnRequest has no ID');
    requests.push({ id: requestId, signed: Boolean(parsed.sigAlg) });
    const samlResponse = await respond(currentUser, { inResponseTo: requestId });
    const relay = query.RelayState;
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(
        `<!DOCTYPE html><html><body onload="document.forms[0].submit()"><form method="post" action="${esc(acsOf(s))}">` +
          `<input type="hidden" name="SAMLResponse" value="${esc(samlResponse)}"/>` +
          (relay !== undefined ? `<input type="hidden" name="RelayState" value="${esc(relay)}"/>` : '') +
          `</form></body></html>`,
      );
  }

  return {
    entityId,
    ssoUrl,
    cert: keys.cert,
    certFile: keys.certFile,
    metadataXml,
    metadataFile,
    dir,
    trust(spMetadataXml) {
      sp = samlify.ServiceProvider({ metadata: spMetadataXml });
    },
    signInAs(user) {
      currentUser = user;
    },
    requests,
    respond,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
