import crypto from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import type { RunBundle } from '@baton/contracts';
import {
  BUNDLE_LIFETIME_MS,
  openBundle,
  openSealedBundle,
  parseWorkerKey,
  SealedBundleError,
  SealedBundleExpiredError,
  sealBundle,
} from './sealed-bundle.js';

const key = crypto.randomBytes(32);
const bundle: RunBundle = {
  run_id: 'run_01JABCDEFGHJKMNPQRSTVWXYZ0',
  playbook: { source: 'inline', content: '- hosts: all\n' },
  inventory: { content: 'localhost', format: 'ini' },
  check: false,
  credentials: [
    { type: 'env', inputs: { variables: { TOKEN: 'hunter2-secret' } } } as RunBundle['credentials'][number],
  ],
};

describe('sealed run bundles', () => {
  it('round-trips a bundle and keeps its secrets out of the sealed text', () => {
    const sealed = sealBundle(bundle, key);
    expect(sealed.startsWith('wb2.')).toBe(true);
    expect(sealed).not.toContain('hunter2');
    expect(Buffer.from(sealed.split('.')[5]!, 'base64url').toString('latin1')).not.toContain('hunter2');
    expect(openBundle(sealed, bundle.run_id, key)).toEqual(bundle);
  });

  it('refuses another key, another run id, altered text and garbage', () => {
    const sealed = sealBundle(bundle, key);
    expect(() => openBundle(sealed, bundle.run_id, crypto.randomBytes(32))).toThrow(SealedBundleError);
    expect(() => openBundle(sealed, 'run_01JABCDEFGHJKMNPQRSTVWXYZ1', key)).toThrow(SealedBundleError);
    const parts = sealed.split('.');
    const ct = Buffer.from(parts[5]!, 'base64url');
    ct[0] = ct[0]! ^ 1;
    expect(() => openBundle([...parts.slice(0, 5), ct.toString('base64url')].join('.'), bundle.run_id, key)).toThrow(
      SealedBundleError,
    );
    expect(() => openBundle('nonsense', bundle.run_id, key)).toThrow(/not a sealed run bundle/);
  });

  it('makes a new nonce at every seal and binds it: a bundle re-labelled with another nonce does not open', () => {
    const first = openSealedBundle(sealBundle(bundle, key), bundle.run_id, key);
    const second = openSealedBundle(sealBundle(bundle, key), bundle.run_id, key);
    expect(first.nonce).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(second.nonce).not.toBe(first.nonce);
    expect(second.bundle).toEqual(first.bundle);

    const parts = sealBundle(bundle, key).split('.');
    const otherNonce = crypto.randomBytes(16).toString('base64url');
    expect(() => openSealedBundle([parts[0], otherNonce, ...parts.slice(2)].join('.'), bundle.run_id, key)).toThrow(
      /does not open/,
    );
    // The nonce of another seal of the same run, with this seal's ciphertext: refused too.
    expect(() => openSealedBundle([parts[0], first.nonce, ...parts.slice(2)].join('.'), bundle.run_id, key)).toThrow(
      SealedBundleError,
    );
    expect(() => openSealedBundle('wb1.a.b.c', bundle.run_id, key)).toThrow(/not a sealed run bundle/);
  });

  it('opens until its expiry; an expired bundle, or one whose expiry was moved, does not open', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    const sealed = sealBundle(bundle, key, { now, lifetimeMs: 60_000 });
    expect(openSealedBundle(sealed, bundle.run_id, key, now + 59_999).expiresAt).toBe(now + 60_000);
    expect(() => openSealedBundle(sealed, bundle.run_id, key, now + 60_000)).toThrow(SealedBundleExpiredError);
    const parts = sealed.split('.');
    expect(() =>
      openSealedBundle(
        [parts[0], parts[1], String(now + 3_600_000), ...parts.slice(3)].join('.'),
        bundle.run_id,
        key,
        now + 60_000,
      ),
    ).toThrow(/does not open/);
    expect(() =>
      openSealedBundle([parts[0], parts[1], '1e99', ...parts.slice(3)].join('.'), bundle.run_id, key),
    ).toThrow(/not a sealed run bundle/);
    // The default lifetime.
    const fresh = openSealedBundle(sealBundle(bundle, key, { now }), bundle.run_id, key, now);
    expect(fresh.expiresAt).toBe(now + BUNDLE_LIFETIME_MS);
  });

  it('parses worker keys as hex or base64 and refuses other lengths', () => {
    const raw = crypto.randomBytes(32);
    expect(parseWorkerKey(raw.toString('hex'))).toEqual(raw);
    expect(parseWorkerKey(` ${raw.toString('base64')}\n`)).toEqual(raw);
    expect(() => parseWorkerKey('abcd')).toThrow(/32 bytes/);
  });
});
