import crypto from 'node:crypto';
import type { ServerKeyRepo } from '@baton/db';
import { type Clock, iso } from '../common/clock.js';
import type { Keyring } from '../crypto/secret-box.js';

export interface SigningKey {
  privateKey: crypto.KeyObject;
  publicKeyPem: string;
  /** SHA-256 of the public key's DER (SPKI), hex: the fingerprint to pin. */
  keyId: string;
}

export function signingKeyFromPrivate(privateKey: crypto.KeyObject): SigningKey {
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error('the audit signing key must be an Ed25519 key');
  const publicKey = crypto.createPublicKey(privateKey);
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return {
    privateKey,
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    keyId: crypto.createHash('sha256').update(der).digest('hex'),
  };
}

/**
 * The audit export signing key. Unless one is configured, it is generated on first use and stored in the
 * database with its private half sealed under the master key, so every API replica signs with the same key
 * and `baton key rotate` re-seals it like any other secret.
 */
export function createSigningKeyStore(deps: {
  serverKeys: Pick<ServerKeyRepo, 'get' | 'insertOrGet'>;
  keyring: Keyring;
  clock: Clock;
  configured?: crypto.KeyObject | undefined;
}) {
  let cached: Promise<SigningKey> | undefined;

  async function load(): Promise<SigningKey> {
    if (deps.configured) return signingKeyFromPrivate(deps.configured);
    let row = await deps.serverKeys.get('audit-signing');
    if (!row) {
      const { privateKey, publicKey } = crypto.generateKeyPairSync('ed25519');
      row = await deps.serverKeys.insertOrGet({
        purpose: 'audit-signing',
        public_key: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
        private_key_enc: deps.keyring.encrypt(privateKey.export({ type: 'pkcs8', format: 'pem' })),
        created_at: iso(deps.clock()),
      });
    }
    return signingKeyFromPrivate(crypto.createPrivateKey(deps.keyring.decrypt(row.private_key_enc)));
  }

  return {
    auditKey(): Promise<SigningKey> {
      cached ??= load().catch((err: unknown) => {
        cached = undefined;
        throw err;
      });
      return cached;
    },
  };
}
export type SigningKeyStore = ReturnType<typeof createSigningKeyStore>;
