import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { checkSshPrivateKey, SshKeyError } from './ssh-key.js';

const PASSPHRASE = 'pass-phrase-canary-7f3a';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-sshkey-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A real key from ssh-keygen, in its default OpenSSH format. */
function sshKeygen(name: string, passphrase: string, type = 'ed25519'): string {
  const file = path.join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', type, '-N', passphrase, '-C', '', '-f', file]);
  return fs.readFileSync(file, 'utf8');
}

const rsaPem = (opts: { type: 'pkcs1' | 'pkcs8'; passphrase?: string }) =>
  crypto.generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: opts.passphrase
      ? { type: opts.type, format: 'pem', cipher: 'aes-256-cbc', passphrase: opts.passphrase }
      : { type: opts.type, format: 'pem' },
  }).privateKey;
const ecPem = () =>
  crypto.generateKeyPairSync('ec', {
    namedCurve: 'P-256',
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'sec1', format: 'pem' },
  }).privateKey;

const OPEN_ED25519 = sshKeygen('plain', '');
const LOCKED_ED25519 = sshKeygen('locked', PASSPHRASE);

/** Builds an openssh-key-v1 container by hand, to reach the structural checks ssh-keygen never fails. */
function container(parts: {
  magic?: string;
  cipher?: string;
  kdf?: string;
  count?: number;
  publicKey?: Buffer;
  privateSection?: Buffer;
}): string {
  const str = (b: Buffer | string) => {
    const data = Buffer.isBuffer(b) ? b : Buffer.from(b, 'latin1');
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    return Buffer.concat([len, data]);
  };
  const u32 = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n);
    return b;
  };
  const pub = parts.publicKey ?? Buffer.concat([str('ssh-ed25519'), str(Buffer.alloc(32, 1))]);
  const priv = parts.privateSection ?? Buffer.concat([u32(7), u32(7), str('ssh-ed25519'), str(Buffer.alloc(32, 1))]);
  const blob = Buffer.concat([
    Buffer.from(parts.magic ?? 'openssh-key-v1\0', 'latin1'),
    str(parts.cipher ?? 'none'),
    str(parts.kdf ?? 'none'),
    str(''),
    u32(parts.count ?? 1),
    str(pub),
    str(priv),
  ]);
  const lines = blob
    .toString('base64')
    .match(/.{1,70}/g)!
    .join('\n');
  return `-----BEGIN OPENSSH PRIVATE KEY-----\n${lines}\n-----END OPENSSH PRIVATE KEY-----\n`;
}

/** Runs the check expecting a refusal; the message must never carry the key or the passphrase. */
function refusal(key: string, passphrase?: string): SshKeyError {
  let caught: unknown;
  try {
    checkSshPrivateKey(key, passphrase);
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(SshKeyError);
  const err = caught as SshKeyError;
  const body = key.split('\n').find((l) => l.length > 20 && !l.startsWith('-----'));
  if (body) expect(err.message).not.toContain(body.slice(0, 20));
  if (passphrase) expect(err.message).not.toContain(passphrase);
  return err;
}

describe('checkSshPrivateKey', () => {
  it.each<[string, () => string, string | undefined, object]>([
    [
      'an unencrypted OpenSSH ed25519 key',
      () => OPEN_ED25519,
      undefined,
      { format: 'openssh', encrypted: false, keyType: 'ssh-ed25519' },
    ],
    [
      'an encrypted OpenSSH ed25519 key with a passphrase',
      () => LOCKED_ED25519,
      PASSPHRASE,
      { format: 'openssh', encrypted: true, keyType: 'ssh-ed25519' },
    ],
    [
      'an OpenSSH RSA key',
      () => sshKeygen('rsa', '', 'rsa'),
      undefined,
      { format: 'openssh', encrypted: false, keyType: 'ssh-rsa' },
    ],
    [
      'an RSA PKCS#1 PEM key',
      () => rsaPem({ type: 'pkcs1' }),
      undefined,
      { format: 'pem', encrypted: false, keyType: 'rsa' },
    ],
    [
      'an RSA PKCS#8 PEM key',
      () => rsaPem({ type: 'pkcs8' }),
      undefined,
      { format: 'pem', encrypted: false, keyType: 'rsa' },
    ],
    [
      'an encrypted PKCS#8 PEM key with its passphrase',
      () => rsaPem({ type: 'pkcs8', passphrase: PASSPHRASE }),
      PASSPHRASE,
      { format: 'pem', encrypted: true, keyType: 'rsa' },
    ],
    [
      'an encrypted PKCS#1 PEM key (Proc-Type) with its passphrase',
      () => rsaPem({ type: 'pkcs1', passphrase: PASSPHRASE }),
      PASSPHRASE,
      { format: 'pem', encrypted: true, keyType: 'rsa' },
    ],
    ['an EC (SEC1) PEM key', ecPem, undefined, { format: 'pem', encrypted: false, keyType: 'ec' }],
    [
      'a key with surrounding blank lines and CRLF line ends',
      () => `\n\n${OPEN_ED25519.replace(/\n/g, '\r\n')}\n`,
      undefined,
      { format: 'openssh' },
    ],
  ])('accepts %s', (_what, key, passphrase, expected) => {
    expect(checkSshPrivateKey(key(), passphrase)).toMatchObject(expected);
  });

  it.each<[string, () => string, string | undefined, 'private_key' | 'passphrase', RegExp]>([
    ['plain text', () => 'hello world', undefined, 'private_key', /PEM .* or OpenSSH format/],
    [
      'a public key',
      () => 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJ5 user@host',
      undefined,
      'private_key',
      /or OpenSSH format/,
    ],
    [
      'a PEM block whose body is garbage',
      () => '-----BEGIN RSA PRIVATE KEY-----\nnot base64 at all!!\n-----END RSA PRIVATE KEY-----',
      undefined,
      'private_key',
      /not a readable PEM/,
    ],
    [
      'a PEM block with mismatched labels',
      () => rsaPem({ type: 'pkcs8' }).replace('END PRIVATE KEY', 'END RSA PRIVATE KEY'),
      undefined,
      'private_key',
      /or OpenSSH format/,
    ],
    [
      'an encrypted PEM key without passphrase',
      () => rsaPem({ type: 'pkcs8', passphrase: PASSPHRASE }),
      undefined,
      'passphrase',
      /encrypted: give its passphrase/,
    ],
    [
      'an encrypted PEM key with a wrong passphrase',
      () => rsaPem({ type: 'pkcs8', passphrase: PASSPHRASE }),
      'wrong-passphrase-123',
      'passphrase',
      /does not open/,
    ],
    [
      'an encrypted PKCS#1 key with a wrong passphrase',
      () => rsaPem({ type: 'pkcs1', passphrase: PASSPHRASE }),
      'wrong-passphrase-123',
      'passphrase',
      /does not open/,
    ],
    [
      'an encrypted OpenSSH key without passphrase',
      () => LOCKED_ED25519,
      undefined,
      'passphrase',
      /encrypted: give its passphrase/,
    ],
    [
      'an OpenSSH key cut short',
      () => OPEN_ED25519.split('\n').slice(0, 3).join('\n') + '\n-----END OPENSSH PRIVATE KEY-----',
      undefined,
      'private_key',
      /not a valid OpenSSH private key/,
    ],
    [
      'an OpenSSH key without END line',
      () => OPEN_ED25519.replace('-----END OPENSSH PRIVATE KEY-----', ''),
      undefined,
      'private_key',
      /no END line/,
    ],
    [
      'an OpenSSH body that is not base64',
      () => '-----BEGIN OPENSSH PRIVATE KEY-----\n#$%^\n-----END OPENSSH PRIVATE KEY-----',
      undefined,
      'private_key',
      /not base64/,
    ],
    ['a wrong magic', () => container({ magic: 'openssh-key-v2\0' }), undefined, 'private_key', /wrong magic/],
    ['two keys in one container', () => container({ count: 2 }), undefined, 'private_key', /exactly one key/],
    [
      'no public key',
      () => container({ publicKey: Buffer.alloc(0) }),
      undefined,
      'private_key',
      /public key is missing/,
    ],
    [
      'no private section',
      () => container({ privateSection: Buffer.alloc(0) }),
      undefined,
      'private_key',
      /private section is missing/,
    ],
    [
      'differing check words',
      () => container({ privateSection: Buffer.from([0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0x61, 0x62, 0x63]) }),
      undefined,
      'private_key',
      /check words differ/,
    ],
    [
      'an encrypted container without the bcrypt kdf',
      () => container({ cipher: 'aes256-ctr', kdf: 'none' }),
      'x',
      'private_key',
      /bcrypt kdf/,
    ],
    [
      'an unencrypted container naming a kdf',
      () => container({ kdf: 'bcrypt' }),
      undefined,
      'private_key',
      /names a kdf/,
    ],
    ['an empty cipher name', () => container({ cipher: '' }), undefined, 'private_key', /cipher name is not a name/],
  ])('refuses %s', (_what, key, passphrase, field, message) => {
    const err = refusal(key(), passphrase);
    expect(err.field).toBe(field);
    expect(err.message).toMatch(message);
  });

  it('accepts a hand-built unencrypted container, so the refusals above fail for their own reason', () => {
    expect(checkSshPrivateKey(container({}))).toEqual({ format: 'openssh', encrypted: false, keyType: 'ssh-ed25519' });
  });
});
