import crypto from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import type { RunBundle } from '@baton/contracts';
import { openBundle, parseWorkerKey, SealedBundleError, sealBundle } from './sealed-bundle.js';

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
    expect(sealed.startsWith('wb1.')).toBe(true);
    expect(sealed).not.toContain('hunter2');
    expect(Buffer.from(sealed.split('.')[3]!, 'base64url').toString('latin1')).not.toContain('hunter2');
    expect(openBundle(sealed, bundle.run_id, key)).toEqual(bundle);
  });

  it('refuses another key, another run id, altered text and garbage', () => {
    const sealed = sealBundle(bundle, key);
    expect(() => openBundle(sealed, bundle.run_id, crypto.randomBytes(32))).toThrow(SealedBundleError);
    expect(() => openBundle(sealed, 'run_01JABCDEFGHJKMNPQRSTVWXYZ1', key)).toThrow(SealedBundleError);
    const parts = sealed.split('.');
    const ct = Buffer.from(parts[3]!, 'base64url');
    ct[0] = ct[0]! ^ 1;
    expect(() =>
      openBundle([parts[0], parts[1], parts[2], ct.toString('base64url')].join('.'), bundle.run_id, key),
    ).toThrow(SealedBundleError);
    expect(() => openBundle('nonsense', bundle.run_id, key)).toThrow(/not a sealed run bundle/);
  });

  it('parses worker keys as hex or base64 and refuses other lengths', () => {
    const raw = crypto.randomBytes(32);
    expect(parseWorkerKey(raw.toString('hex'))).toEqual(raw);
    expect(parseWorkerKey(` ${raw.toString('base64')}\n`)).toEqual(raw);
    expect(() => parseWorkerKey('abcd')).toThrow(/32 bytes/);
  });
});
