import { describe, expect, it } from '@jest/globals';
import { hashPassword, verifyPassword } from './password.js';
import { generateMasterKey, Keyring, masterKeyFrom, parseMasterKey } from './secret-box.js';
import { newToken, sha256Hex } from './tokens.js';

describe('Keyring (AES-256-GCM with key ids)', () => {
  it('round-trips and never shows the plaintext in the sealed value', () => {
    const ring = new Keyring(generateMasterKey());
    const sealed = ring.encrypt('canary-secret-value');
    expect(sealed).toMatch(/^v1\.[0-9a-f]{16}\./);
    expect(sealed).not.toContain('canary');
    expect(ring.decrypt(sealed).toString()).toBe('canary-secret-value');
    expect(ring.encrypt('same')).not.toBe(ring.encrypt('same'));
  });

  it('refuses tampered values and values sealed under a key it does not hold', () => {
    const ring = new Keyring(generateMasterKey());
    const sealed = ring.encrypt('x');
    const parts = sealed.split('.');
    parts[4] = Buffer.from('y').toString('base64url');
    expect(() => ring.decrypt(parts.join('.'))).toThrow();
    expect(() => new Keyring(generateMasterKey()).decrypt(sealed)).toThrow(/does not hold/);
    expect(() => ring.decrypt('plain text')).toThrow(/not a sealed value/);
  });

  it('re-seals under the current key while older keys still open old values', () => {
    const oldKey = generateMasterKey();
    const sealedOld = new Keyring(oldKey).encrypt('secret');
    const ring = new Keyring(generateMasterKey(), [oldKey]);
    const resealed = ring.reseal(sealedOld);
    expect(resealed.split('.')[1]).toBe(ring.current.kid);
    expect(new Keyring(ring.current).decrypt(resealed).toString()).toBe('secret');
    expect(ring.reseal(resealed)).toBe(resealed);
    expect(ring.keys().map((k) => k.kid)).toEqual([ring.current.kid, oldKey.kid]);
  });

  it('parses keys as hex or base64 and rejects other lengths', () => {
    const key = generateMasterKey();
    expect(parseMasterKey(key.key.toString('hex')).kid).toBe(key.kid);
    expect(parseMasterKey(key.key.toString('base64')).kid).toBe(key.kid);
    expect(() => parseMasterKey('abcd')).toThrow(/32 bytes/);
    expect(() => masterKeyFrom(Buffer.alloc(16))).toThrow(/32 bytes/);
  });
});

describe('passwords (scrypt)', () => {
  it('verifies the right password only, with a fresh salt each time', async () => {
    const a = await hashPassword('correct horse battery staple');
    const b = await hashPassword('correct horse battery staple');
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword('correct horse battery staple', a)).toBe(true);
    expect(await verifyPassword('correct horse battery stapl', a)).toBe(false);
    expect(await verifyPassword('anything', 'not-a-hash')).toBe(false);
  });

  it('records a lower cost it was given in the hash, and verification follows the hash, not the default', async () => {
    const cheap = await hashPassword('correct horse battery staple', { N: 1024, r: 8, p: 1 });
    expect(cheap).toMatch(/^scrypt\$1024\$8\$1\$/);
    expect(await verifyPassword('correct horse battery staple', cheap)).toBe(true);
    expect(await verifyPassword('correct horse battery stapler', cheap)).toBe(false);
  });
});

describe('tokens', () => {
  it('are random and stored only as their SHA-256', () => {
    const t = newToken();
    expect(t).toMatch(/^bt_[A-Za-z0-9_-]{43}$/);
    expect(newToken()).not.toBe(t);
    expect(sha256Hex(t)).toMatch(/^[0-9a-f]{64}$/);
  });
});
