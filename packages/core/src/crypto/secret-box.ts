import crypto from 'node:crypto';

/**
 * AES-256-GCM under a master key, with the key's id in every ciphertext so keys can rotate:
 * `v1.<kid>.<iv>.<tag>.<ciphertext>` (base64url parts). A keyring decrypts with any of its keys and
 * encrypts with the current one.
 */
export interface MasterKey {
  kid: string;
  key: Buffer;
}

export class Keyring {
  readonly #byId = new Map<string, Buffer>();
  constructor(
    readonly current: MasterKey,
    older: MasterKey[] = [],
  ) {
    for (const k of [current, ...older]) this.#byId.set(k.kid, k.key);
  }

  /** Every key this ring can open values with, current first. */
  keys(): MasterKey[] {
    return [...this.#byId].map(([kid, key]) => ({ kid, key }));
  }

  encrypt(plaintext: string | Buffer): string {
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.current.key, iv);
    cipher.setAAD(Buffer.from(this.current.kid));
    const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return [
      'v1',
      this.current.kid,
      iv.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
      ct.toString('base64url'),
    ].join('.');
  }

  decrypt(sealed: string): Buffer {
    const [version, kid, iv, tag, ct] = sealed.split('.');
    if (version !== 'v1' || !kid || !iv || !tag || ct === undefined) throw new Error('not a sealed value');
    const key = this.#byId.get(kid);
    if (!key) throw new Error(`value is sealed under key ${kid}, which this keyring does not hold`);
    const decipher = crypto.createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(kid));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]);
  }

  /** Re-seals under the current key; values already under it are returned unchanged. */
  reseal(sealed: string): string {
    return sealed.split('.')[1] === this.current.kid ? sealed : this.encrypt(this.decrypt(sealed));
  }
}

/** Key id: the first 16 hex digits of the key's SHA-256. Says which key, reveals nothing of it. */
/** A JSON value sealed with `keyring.encrypt(JSON.stringify(value))`, opened again (throws when no key opens it). */
export function openSealedJson<T>(keyring: Pick<Keyring, 'decrypt'>, sealed: string): T {
  return JSON.parse(keyring.decrypt(sealed).toString('utf8')) as T;
}

export function masterKeyFrom(key: Buffer): MasterKey {
  if (key.length !== 32) throw new Error('a master key is 32 bytes');
  return { kid: crypto.createHash('sha256').update(key).digest('hex').slice(0, 16), key };
}

/** Accepts 32 bytes as 64 hex digits or base64 / base64url. */
export function parseMasterKey(text: string): MasterKey {
  const t = text.trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, 'hex') : Buffer.from(t, 'base64');
  if (bytes.length !== 32) throw new Error('must be 32 bytes, as 64 hex digits or base64');
  return masterKeyFrom(bytes);
}

export function generateMasterKey(): MasterKey {
  return masterKeyFrom(crypto.randomBytes(32));
}
