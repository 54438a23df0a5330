// SAML sign-in settings (issue 12, "SAML"): the identity provider (from its metadata file, or its SSO URL and signing
// certificate), this service provider's entity id and ACS URL, and an optional SP key pair. Read once at start; a
// partial or unreadable configuration stops the start with a message naming the variable.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { DOMParser } from '@xmldom/xmldom';
import { DEFAULT_ROLE_CLAIM } from './sso-config.js';

export interface SamlIdpSettings {
  /** The IdP's entity id: from its metadata or BATON_SAML_IDP_ENTITY_ID; when known, assertions must carry it. */
  entityId?: string | undefined;
  /** Where AuthnRequests go (HTTP-Redirect binding). */
  ssoUrl: string;
  /** PEM certificates whose keys may sign assertions (more than one during a key rollover). */
  certs: string[];
}

export interface SamlSettings {
  idp: SamlIdpSettings;
  spEntityId: string;
  acsUrl: string;
  /** Signs AuthnRequests, is published in the metadata, and decrypts encrypted assertions. */
  spKeyPair?: { privateKey: string; cert: string } | undefined;
  /** Accept responses the IdP sent unasked (no InResponseTo); off by default (login CSRF). */
  allowIdpInitiated: boolean;
  /** The attribute whose values are the user's groups (BATON_SSO_ROLE_CLAIM, default `groups`). */
  groupsAttribute: string;
}

/** Thrown for any bad SAML setting; the message starts with the variable's name. */
export class SamlConfigError extends Error {}

const MD = 'urn:oasis:names:tc:SAML:2.0:metadata';
const DS = 'http://www.w3.org/2000/09/xmldsig#';
const REDIRECT_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';

/** Every BATON_SAML_* variable; any of them set means SAML is wanted, and then it must be complete. */
export const SAML_VARIABLES = [
  'BATON_SAML_IDP_METADATA',
  'BATON_SAML_IDP_SSO_URL',
  'BATON_SAML_IDP_CERT',
  'BATON_SAML_IDP_ENTITY_ID',
  'BATON_SAML_SP_ENTITY_ID',
  'BATON_SAML_ACS_URL',
  'BATON_SAML_SP_KEY_FILE',
  'BATON_SAML_SP_CERT_FILE',
  'BATON_SAML_ALLOW_IDP_INITIATED',
] as const;

function fail(variable: string, message: string): never {
  throw new SamlConfigError(`${variable}: ${message}`);
}

function httpUrl(variable: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    fail(variable, `must be an http:// or https:// URL, not ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    fail(variable, `must be an http:// or https:// URL, not ${JSON.stringify(value)}`);
  if (url.hash) fail(variable, 'must not carry a fragment');
  return value;
}

function readFile(variable: string, file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    fail(variable, `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** The PEM form of a base64 DER certificate, as metadata carries it. */
function derBase64ToPem(base64: string): string {
  const body = base64.replace(/\s+/g, '');
  return `-----BEGIN CERTIFICATE-----\n${body.replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;
}

/** Every certificate in the text, checked to be an X.509 certificate. */
function certificates(variable: string, text: string, where: string): string[] {
  const pems = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (pems.length === 0) fail(variable, `${where} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  return pems.map((pem) => checkedCert(variable, `${pem}\n`, where));
}

function checkedCert(variable: string, pem: string, where: string): string {
  try {
    new crypto.X509Certificate(pem);
  } catch (err) {
    fail(variable, `${where} holds a certificate that cannot be read: ${(err as Error).message}`);
  }
  return pem;
}

/** BATON_SAML_IDP_CERT: PEM text itself, or the path of a file holding it. */
function idpCerts(value: string): string[] {
  const variable = 'BATON_SAML_IDP_CERT';
  if (value.includes('-----BEGIN')) return certificates(variable, value, 'the value');
  if (!fs.existsSync(value))
    fail(variable, 'must be PEM text (-----BEGIN CERTIFICATE-----…) or the path of a PEM file');
  return certificates(variable, readFile(variable, value), value);
}

function parseXml(variable: string, xml: string, where: string): Document {
  const errors: string[] = [];
  const doc = new DOMParser({
    errorHandler: {
      warning: () => {},
      error: (m: unknown) => errors.push(String(m)),
      fatalError: (m: unknown) => errors.push(String(m)),
    },
  }).parseFromString(xml, 'application/xml');
  if (errors.length || !doc?.documentElement)
    fail(variable, `${where} is not well-formed XML: ${errors[0] ?? 'empty'}`);
  return doc;
}

function children(parent: Element, ns: string, localName: string): Element[] {
  const out: Element[] = [];
  for (let n = parent.firstChild; n; n = n.nextSibling)
    if (n.nodeType === 1 && (n as Element).namespaceURI === ns && (n as Element).localName === localName)
      out.push(n as Element);
  return out;
}

/** The IdP described by a metadata file: its entity id, HTTP-Redirect SSO URL and signing certificates. */
export function readIdpMetadata(file: string): SamlIdpSettings {
  const variable = 'BATON_SAML_IDP_METADATA';
  const doc = parseXml(variable, readFile(variable, file), file);
  const entities = Array.from(doc.getElementsByTagNameNS(MD, 'EntityDescriptor')).filter(
    (e) => children(e, MD, 'IDPSSODescriptor').length > 0,
  );
  if (entities.length !== 1)
    fail(
      variable,
      entities.length
        ? `${file} describes ${entities.length} identity providers; give the metadata of exactly one`
        : `${file} holds no EntityDescriptor with an IDPSSODescriptor`,
    );
  const entity = entities[0]!;
  const entityId = entity.getAttribute('entityID')?.trim();
  if (!entityId) fail(variable, `${file}: the EntityDescriptor has no entityID`);
  const idpDescriptor = children(entity, MD, 'IDPSSODescriptor')[0]!;
  const sso = children(idpDescriptor, MD, 'SingleSignOnService').find(
    (s) => s.getAttribute('Binding') === REDIRECT_BINDING,
  );
  const location = sso?.getAttribute('Location')?.trim();
  if (!location) fail(variable, `${file}: no SingleSignOnService with the HTTP-Redirect binding`);
  httpUrl(variable, location);
  const certs: string[] = [];
  for (const key of children(idpDescriptor, MD, 'KeyDescriptor')) {
    const use = key.getAttribute('use');
    if (use && use !== 'signing') continue;
    for (const x509 of Array.from(key.getElementsByTagNameNS(DS, 'X509Certificate'))) {
      const text = x509.textContent?.trim();
      if (text) certs.push(checkedCert(variable, derBase64ToPem(text), file));
    }
  }
  if (certs.length === 0) fail(variable, `${file}: the IDPSSODescriptor has no signing certificate (KeyDescriptor)`);
  return { entityId, ssoUrl: location, certs };
}

function spKeyPair(keyFile: string | undefined, certFile: string | undefined): SamlSettings['spKeyPair'] {
  if (!keyFile && !certFile) return undefined;
  if (!keyFile)
    fail('BATON_SAML_SP_KEY_FILE', 'must be set with BATON_SAML_SP_CERT_FILE (the key of that certificate)');
  if (!certFile)
    fail('BATON_SAML_SP_CERT_FILE', 'must be set with BATON_SAML_SP_KEY_FILE (the certificate of that key)');
  const privateKey = readFile('BATON_SAML_SP_KEY_FILE', keyFile);
  let key: crypto.KeyObject;
  try {
    key = crypto.createPrivateKey(privateKey);
  } catch (err) {
    fail('BATON_SAML_SP_KEY_FILE', `${keyFile} holds no readable private key (PEM): ${(err as Error).message}`);
  }
  if (key.asymmetricKeyType !== 'rsa') fail('BATON_SAML_SP_KEY_FILE', `${keyFile} must hold an RSA key`);
  const cert = certificates('BATON_SAML_SP_CERT_FILE', readFile('BATON_SAML_SP_CERT_FILE', certFile), certFile)[0]!;
  if (!new crypto.X509Certificate(cert).checkPrivateKey(key))
    fail('BATON_SAML_SP_CERT_FILE', `${certFile} is not the certificate of the key in BATON_SAML_SP_KEY_FILE`);
  return { privateKey, cert };
}

/**
 * The SAML settings from the environment, or undefined when no BATON_SAML_* variable is set (SAML off: its routes
 * answer 404). `publicUrl` is BATON_PUBLIC_URL without a trailing slash (the ACS URL's default base).
 */
/** `groupsAttribute`: BATON_SSO_ROLE_CLAIM as sso-config.ts read it (one reading for every protocol). */
export function loadSamlSettings(
  env: NodeJS.ProcessEnv,
  publicUrl: string,
  groupsAttribute: string = DEFAULT_ROLE_CLAIM,
): SamlSettings | undefined {
  const get = (name: (typeof SAML_VARIABLES)[number]) => {
    const v = env[name]?.trim();
    return v ? v : undefined;
  };
  if (!SAML_VARIABLES.some((name) => get(name) !== undefined)) return undefined;

  const metadata = get('BATON_SAML_IDP_METADATA');
  const ssoUrl = get('BATON_SAML_IDP_SSO_URL');
  const cert = get('BATON_SAML_IDP_CERT');
  let idp: SamlIdpSettings;
  if (metadata) {
    for (const other of ['BATON_SAML_IDP_SSO_URL', 'BATON_SAML_IDP_CERT', 'BATON_SAML_IDP_ENTITY_ID'] as const)
      if (get(other)) fail(other, 'set either BATON_SAML_IDP_METADATA or this, not both (the metadata says it)');
    idp = readIdpMetadata(metadata);
  } else {
    if (!ssoUrl && !cert)
      fail(
        'BATON_SAML_IDP_METADATA',
        'SAML needs the IdP: its metadata file, or BATON_SAML_IDP_SSO_URL and BATON_SAML_IDP_CERT',
      );
    if (!ssoUrl)
      fail('BATON_SAML_IDP_SSO_URL', 'must be set with BATON_SAML_IDP_CERT (or use BATON_SAML_IDP_METADATA)');
    if (!cert) fail('BATON_SAML_IDP_CERT', 'must be set with BATON_SAML_IDP_SSO_URL (or use BATON_SAML_IDP_METADATA)');
    idp = {
      entityId: get('BATON_SAML_IDP_ENTITY_ID'),
      ssoUrl: httpUrl('BATON_SAML_IDP_SSO_URL', ssoUrl),
      certs: idpCerts(cert),
    };
  }

  const spEntityId = get('BATON_SAML_SP_ENTITY_ID');
  if (!spEntityId)
    fail(
      'BATON_SAML_SP_ENTITY_ID',
      'must be set when SAML is configured (e.g. the metadata URL, https://baton.example.com/auth/saml/metadata)',
    );
  const acsUrl = httpUrl('BATON_SAML_ACS_URL', get('BATON_SAML_ACS_URL') ?? `${publicUrl}/auth/saml/acs`);
  const allow = get('BATON_SAML_ALLOW_IDP_INITIATED') ?? 'false';
  if (allow !== 'true' && allow !== 'false') fail('BATON_SAML_ALLOW_IDP_INITIATED', 'must be true or false');
  return {
    idp,
    spEntityId,
    acsUrl,
    spKeyPair: spKeyPair(get('BATON_SAML_SP_KEY_FILE'), get('BATON_SAML_SP_CERT_FILE')),
    allowIdpInitiated: allow === 'true',
    groupsAttribute,
  };
}
