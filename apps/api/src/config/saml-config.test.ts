import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { makeKeyPair, type KeyPair } from '../testing/saml-idp.js';
import { ConfigError, loadConfig } from './config.js';
import { loadSamlSettings, SamlConfigError } from './saml-config.js';

const PUBLIC_URL = 'https://baton.example.com';
const SP = { BATON_SAML_SP_ENTITY_ID: 'https://baton.example.com/saml' };

/** The SamlConfigError thrown by fn (fails the test when fn does not throw one). */
function samlError(fn: () => unknown): SamlConfigError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(SamlConfigError);
  return caught as SamlConfigError;
}

const der = (pem: string) => pem.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, '');

function idpMetadata(opts: { entityId?: string; certs: string[]; encryptionCert?: string; binding?: string }) {
  const keys = opts.certs
    .map(
      (c) =>
        `<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${der(c)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`,
    )
    .join('');
  const encryption = opts.encryptionCert
    ? `<md:KeyDescriptor use="encryption"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${der(opts.encryptionCert)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`
    : '';
  return (
    `<?xml version="1.0"?><md:EntitiesDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#">` +
    `<md:EntityDescriptor${opts.entityId === undefined ? '' : ` entityID="${opts.entityId}"`}><md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">${encryption}${keys}` +
    `<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://idp.example.com/sso/post"/>` +
    `<md:SingleSignOnService Binding="${opts.binding ?? 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect'}" Location="https://idp.example.com/sso/redirect"/>` +
    `</md:IDPSSODescriptor></md:EntityDescriptor></md:EntitiesDescriptor>`
  );
}

describe('SAML settings', () => {
  let dir: string;
  let idp: KeyPair;
  let next: KeyPair;
  let sp: KeyPair;
  let other: KeyPair;
  const write = (name: string, text: string) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, text);
    return file;
  };

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-saml-config-'));
    idp = makeKeyPair(dir, 'idp');
    next = makeKeyPair(dir, 'idp-next');
    sp = makeKeyPair(dir, 'sp');
    other = makeKeyPair(dir, 'other');
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('is off (undefined) when no BATON_SAML_* variable is set, empty ones included', () => {
    expect(loadSamlSettings({}, PUBLIC_URL)).toBeUndefined();
    expect(loadSamlSettings({ BATON_SAML_SP_ENTITY_ID: '  ' }, PUBLIC_URL)).toBeUndefined();
    expect(loadConfig({}).saml).toBeUndefined();
  });

  it('reads the IdP from its metadata: entity id, HTTP-Redirect SSO URL, every signing certificate', () => {
    const file = write(
      'idp.xml',
      idpMetadata({ entityId: 'https://idp.example.com', certs: [idp.cert, next.cert], encryptionCert: other.cert }),
    );
    const s = loadSamlSettings({ BATON_SAML_IDP_METADATA: file, ...SP }, PUBLIC_URL)!;
    expect(s.idp.entityId).toBe('https://idp.example.com');
    expect(s.idp.ssoUrl).toBe('https://idp.example.com/sso/redirect');
    // Both signing certificates (a key rollover), not the encryption one; as PEM the SP can use.
    expect(s.idp.certs).toHaveLength(2);
    expect(der(s.idp.certs[0]!)).toBe(der(idp.cert));
    expect(der(s.idp.certs[1]!)).toBe(der(next.cert));
    expect(s.spEntityId).toBe(SP.BATON_SAML_SP_ENTITY_ID);
    expect(s.acsUrl).toBe(`${PUBLIC_URL}/auth/saml/acs`);
    expect(s.spKeyPair).toBeUndefined();
    expect(s.allowIdpInitiated).toBe(false);
    expect(s.groupsAttribute).toBe('groups');
  });

  it('takes the IdP SSO URL and certificate as PEM text or as a file, an explicit ACS URL, the role attribute', () => {
    const base = { BATON_SAML_IDP_SSO_URL: 'https://idp.example.com/sso', ...SP };
    const fromText = loadSamlSettings({ ...base, BATON_SAML_IDP_CERT: idp.cert }, PUBLIC_URL)!;
    const fromFile = loadSamlSettings(
      {
        ...base,
        BATON_SAML_IDP_CERT: idp.certFile,
        BATON_SAML_IDP_ENTITY_ID: 'urn:idp',
        BATON_SAML_ACS_URL: 'https://sso.example.com/baton/acs',
        BATON_SAML_ALLOW_IDP_INITIATED: 'true',
      },
      PUBLIC_URL,
      'memberOf',
    )!;
    expect(fromText.idp).toEqual({ entityId: undefined, ssoUrl: 'https://idp.example.com/sso', certs: [idp.cert] });
    expect(fromFile.idp).toEqual({ entityId: 'urn:idp', ssoUrl: 'https://idp.example.com/sso', certs: [idp.cert] });
    expect(fromFile.acsUrl).toBe('https://sso.example.com/baton/acs');
    expect(fromFile.allowIdpInitiated).toBe(true);
    expect(fromFile.groupsAttribute).toBe('memberOf');
  });

  it('takes an SP key pair whose certificate matches the key', () => {
    const s = loadSamlSettings(
      {
        BATON_SAML_IDP_SSO_URL: 'https://idp.example.com/sso',
        BATON_SAML_IDP_CERT: idp.cert,
        ...SP,
        BATON_SAML_SP_KEY_FILE: sp.keyFile,
        BATON_SAML_SP_CERT_FILE: sp.certFile,
      },
      PUBLIC_URL,
    )!;
    expect(s.spKeyPair).toEqual({ privateKey: sp.key, cert: sp.cert });
  });

  it('stops on a partial or bad setting, naming the variable', () => {
    const idpUrl = { BATON_SAML_IDP_SSO_URL: 'https://idp.example.com/sso', BATON_SAML_IDP_CERT: idp.cert };
    const good = write('good.xml', idpMetadata({ entityId: 'https://idp.example.com', certs: [idp.cert] }));
    const cases: Array<[Record<string, string>, string]> = [
      [SP, 'BATON_SAML_IDP_METADATA'],
      [{ ...SP, BATON_SAML_IDP_SSO_URL: 'https://idp.example.com/sso' }, 'BATON_SAML_IDP_CERT'],
      [{ ...SP, BATON_SAML_IDP_CERT: idp.cert }, 'BATON_SAML_IDP_SSO_URL'],
      [idpUrl, 'BATON_SAML_SP_ENTITY_ID'],
      [{ BATON_SAML_IDP_METADATA: good }, 'BATON_SAML_SP_ENTITY_ID'],
      [{ ...SP, ...idpUrl, BATON_SAML_IDP_METADATA: good }, 'BATON_SAML_IDP_SSO_URL'],
      [{ ...SP, ...idpUrl, BATON_SAML_IDP_SSO_URL: 'ftp://idp.example.com/sso' }, 'BATON_SAML_IDP_SSO_URL'],
      [{ ...SP, ...idpUrl, BATON_SAML_IDP_SSO_URL: 'not a url' }, 'BATON_SAML_IDP_SSO_URL'],
      [{ ...SP, ...idpUrl, BATON_SAML_IDP_CERT: path.join(dir, 'missing.pem') }, 'BATON_SAML_IDP_CERT'],
      [{ ...SP, ...idpUrl, BATON_SAML_IDP_CERT: sp.keyFile }, 'BATON_SAML_IDP_CERT'],
      [
        {
          ...SP,
          ...idpUrl,
          BATON_SAML_IDP_CERT: '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----',
        },
        'BATON_SAML_IDP_CERT',
      ],
      [{ ...SP, ...idpUrl, BATON_SAML_ACS_URL: 'https://x.example/acs#f' }, 'BATON_SAML_ACS_URL'],
      [{ ...SP, ...idpUrl, BATON_SAML_ALLOW_IDP_INITIATED: 'yes' }, 'BATON_SAML_ALLOW_IDP_INITIATED'],
      [{ ...SP, ...idpUrl, BATON_SAML_SP_KEY_FILE: sp.keyFile }, 'BATON_SAML_SP_CERT_FILE'],
      [{ ...SP, ...idpUrl, BATON_SAML_SP_CERT_FILE: sp.certFile }, 'BATON_SAML_SP_KEY_FILE'],
      [
        { ...SP, ...idpUrl, BATON_SAML_SP_KEY_FILE: sp.keyFile, BATON_SAML_SP_CERT_FILE: other.certFile },
        'BATON_SAML_SP_CERT_FILE',
      ],
      [
        { ...SP, ...idpUrl, BATON_SAML_SP_KEY_FILE: sp.certFile, BATON_SAML_SP_CERT_FILE: sp.certFile },
        'BATON_SAML_SP_KEY_FILE',
      ],
      [{ ...SP, BATON_SAML_IDP_METADATA: path.join(dir, 'missing.xml') }, 'BATON_SAML_IDP_METADATA'],
      [{ ...SP, BATON_SAML_IDP_METADATA: write('bad.xml', '<md:EntityDescriptor') }, 'BATON_SAML_IDP_METADATA'],
      [
        {
          ...SP,
          BATON_SAML_IDP_METADATA: write(
            'sp.xml',
            '<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"><SPSSODescriptor/></EntityDescriptor>',
          ),
        },
        'BATON_SAML_IDP_METADATA',
      ],
      [
        { ...SP, BATON_SAML_IDP_METADATA: write('noid.xml', idpMetadata({ certs: [idp.cert] })) },
        'BATON_SAML_IDP_METADATA',
      ],
      [
        { ...SP, BATON_SAML_IDP_METADATA: write('nocert.xml', idpMetadata({ entityId: 'x', certs: [] })) },
        'BATON_SAML_IDP_METADATA',
      ],
      [
        {
          ...SP,
          BATON_SAML_IDP_METADATA: write(
            'post-only.xml',
            idpMetadata({
              entityId: 'x',
              certs: [idp.cert],
              binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST',
            }),
          ),
        },
        'BATON_SAML_IDP_METADATA',
      ],
    ];
    for (const [env, variable] of cases) {
      expect(samlError(() => loadSamlSettings(env, PUBLIC_URL)).message).toMatch(new RegExp(`^${variable}: `));
    }
  });

  it('loadConfig stops the start with a ConfigError naming the variable', () => {
    let caught: unknown;
    try {
      loadConfig({ BATON_SAML_SP_ENTITY_ID: 'https://baton.example.com/saml' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as Error).message).toContain('BATON_SAML_IDP_METADATA');
    const c = loadConfig({
      BATON_PUBLIC_URL: 'https://baton.example.com/',
      BATON_SAML_IDP_SSO_URL: 'https://idp.example.com/sso',
      BATON_SAML_IDP_CERT: idp.certFile,
      BATON_SAML_SP_ENTITY_ID: 'https://baton.example.com/saml',
    });
    expect(c.saml?.acsUrl).toBe('https://baton.example.com/auth/saml/acs');
    expect(c.saml?.groupsAttribute).toBe('groups');
    // BATON_SSO_ROLE_CLAIM is read once (sso-config.ts) for OIDC and SAML alike.
    const memberOf = loadConfig({
      BATON_SAML_IDP_SSO_URL: 'https://idp.example.com/sso',
      BATON_SAML_IDP_CERT: idp.certFile,
      BATON_SAML_SP_ENTITY_ID: 'https://baton.example.com/saml',
      BATON_SSO_ROLE_CLAIM: 'memberOf',
    });
    expect(memberOf.saml?.groupsAttribute).toBe('memberOf');
    expect(memberOf.sso.roleClaim).toBe('memberOf');
  });
});
