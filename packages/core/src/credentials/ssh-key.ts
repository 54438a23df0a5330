import crypto from 'node:crypto';

/**
 * Checks that a stored ssh_key credential holds a private key ssh-add will take, without ever echoing the
 * key or its passphrase: every message below is a fixed text, never built from the input.
 */
export interface SshKeyInfo {
  format: 'pem' | 'openssh';
  encrypted: boolean;
  /** e.g. `rsa`, `ec`, `ed25519` (PEM, from node:crypto) or `ssh-ed25519` (OpenSSH, from the key blob) */
  keyType: string;
}

/** Which input is wrong and why, in words safe to show and log. */
export class SshKeyError extends Error {
  constructor(
    readonly field: 'private_key' | 'passphrase',
    message: string,
  ) {
    super(message);
    this.name = 'SshKeyError';
  }
}

const OPENSSH_BEGIN = '-----BEGIN OPENSSH PRIVATE KEY-----';
const OPENSSH_END = '-----END OPENSSH PRIVATE KEY-----';
const OPENSSH_MAGIC = Buffer.from('openssh-key-v1\0', 'latin1');
// One PEM block of a private key: "RSA PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY", "ENCRYPTED PRIVATE KEY"…
const PEM_BLOCK = /^-----BEGIN ([A-Z0-9 ]*PRIVATE KEY)-----\r?\n[\s\S]+?\r?\n-----END \1-----$/;

export function checkSshPrivateKey(text: string, passphrase?: string | undefined): SshKeyInfo {
  const key = text.trim();
  if (key.startsWith(OPENSSH_BEGIN)) return checkOpenSsh(key, passphrase);
  const pem = PEM_BLOCK.exec(key);
  if (pem) return checkPem(key, pem[1]!, passphrase);
  throw new SshKeyError(
    'private_key',
    'must be one private key in PEM ("-----BEGIN … PRIVATE KEY-----") or OpenSSH format',
  );
}

function checkPem(key: string, label: string, passphrase: string | undefined): SshKeyInfo {
  // PKCS#8 says so in its label, the traditional formats (RSA/EC/DSA) in a Proc-Type header.
  const encrypted = label === 'ENCRYPTED PRIVATE KEY' || /^Proc-Type:\s*4,ENCRYPTED\s*$/m.test(key);
  if (encrypted && passphrase === undefined)
    throw new SshKeyError('passphrase', 'the private key is encrypted: give its passphrase');
  let parsed: crypto.KeyObject;
  try {
    // An unencrypted key ignores the passphrase; an empty string keeps node from prompting on a TTY.
    parsed = crypto.createPrivateKey({ key, format: 'pem', passphrase: passphrase ?? '' });
  } catch {
    // node's own message is generic ("bad decrypt"), but it is dropped anyway: only fixed texts leave here.
    if (encrypted) throw new SshKeyError('passphrase', 'the passphrase does not open the private key');
    throw new SshKeyError('private_key', 'is not a readable PEM private key');
  }
  return { format: 'pem', encrypted, keyType: parsed.asymmetricKeyType ?? 'unknown' };
}

/** Length-prefixed fields of the SSH wire format (RFC 4251 §5), bounds-checked. */
class WireReader {
  #at = 0;
  constructor(private readonly buf: Buffer) {}
  uint32(what: string): number {
    if (this.#at + 4 > this.buf.length) throw malformed(`it ends before ${what}`);
    const v = this.buf.readUInt32BE(this.#at);
    this.#at += 4;
    return v;
  }
  bytes(what: string): Buffer {
    const len = this.uint32(what);
    if (this.#at + len > this.buf.length) throw malformed(`${what} runs past its end`);
    const out = this.buf.subarray(this.#at, this.#at + len);
    this.#at += len;
    return out;
  }
  /** A short ASCII name (cipher, kdf, key type): anything else means this is not the format we expect. */
  name(what: string): string {
    const b = this.bytes(what);
    if (b.length === 0 || b.length > 64 || !/^[\x21-\x7e]+$/.test(b.toString('latin1')))
      throw malformed(`${what} is not a name`);
    return b.toString('latin1');
  }
}

const malformed = (why: string) => new SshKeyError('private_key', `is not a valid OpenSSH private key (${why})`);

function checkOpenSsh(key: string, passphrase: string | undefined): SshKeyInfo {
  if (!key.endsWith(OPENSSH_END)) throw malformed('no END line');
  const body = key.slice(OPENSSH_BEGIN.length, -OPENSSH_END.length).replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(body)) throw malformed('the body is not base64');
  const blob = Buffer.from(body, 'base64');
  if (blob.length < OPENSSH_MAGIC.length || !blob.subarray(0, OPENSSH_MAGIC.length).equals(OPENSSH_MAGIC))
    throw malformed('wrong magic');

  const r = new WireReader(blob.subarray(OPENSSH_MAGIC.length));
  const cipher = r.name('the cipher name');
  const kdf = r.name('the kdf name');
  r.bytes('the kdf options');
  const count = r.uint32('the key count');
  if (count !== 1) throw malformed('it must hold exactly one key');
  const publicKey = r.bytes('the public key');
  if (publicKey.length === 0) throw malformed('the public key is missing');
  const keyType = new WireReader(publicKey).name('the public key type');
  const privateSection = r.bytes('the private section');
  if (privateSection.length === 0) throw malformed('the private section is missing');

  if (cipher === 'none') {
    if (kdf !== 'none') throw malformed('an unencrypted key names a kdf');
    // Unencrypted, so the private section can be checked too: two equal check words, then the same key type.
    const priv = new WireReader(privateSection);
    if (priv.uint32('the first check word') !== priv.uint32('the second check word'))
      throw malformed('the check words differ');
    if (priv.name('the private key type') !== keyType)
      throw malformed('the private key type differs from the public one');
    return { format: 'openssh', encrypted: false, keyType };
  }
  if (kdf !== 'bcrypt') throw malformed('an encrypted key must use the bcrypt kdf');
  // node:crypto has no bcrypt_pbkdf, so the passphrase itself is first tried when a run loads the key.
  if (passphrase === undefined)
    throw new SshKeyError('passphrase', 'the private key is encrypted: give its passphrase');
  return { format: 'openssh', encrypted: true, keyType };
}
