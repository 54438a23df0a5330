import { describe, expect, it } from '@jest/globals';
import type { BundleCredential, RunBundle } from '@baton/contracts';
import { secretsOf } from './run-secrets.js';

const bundleWith = (...credentials: BundleCredential[]): RunBundle => ({
  run_id: 'run_s',
  playbook: { source: 'inline', content: '' },
  inventory: { content: '', format: 'ini' },
  check: false,
  credentials,
});
const env = (value: string): BundleCredential => ({ type: 'env', inputs: { variables: { V: value } } });

describe('secretsOf', () => {
  it('gives each secret as printed raw, inside JSON (both of Python json.dumps forms) and inside repr', () => {
    expect(new Set(secretsOf(bundleWith(env('pa"ss\\wörd\tx'))))).toEqual(
      new Set([
        'pa"ss\\wörd\tx', // raw
        'pa\\"ss\\\\wörd\\tx', // JSON, ensure_ascii=False
        'pa\\"ss\\\\w\\u00f6rd\\tx', // JSON, ensure_ascii=True
        'pa"ss\\\\wörd\\tx', // repr (quoted with ')
        'pa\\"ss\\\\\\\\wörd\\\\tx', // repr printed inside JSON
      ]),
    );
    const quotes = secretsOf(bundleWith(env(`it's "x"`)));
    expect(quotes).toEqual(expect.arrayContaining([`it\\'s "x"`, `it's "x"`, `it\\\\'s \\"x\\"`]));
    expect(secretsOf(bundleWith(env('bell\u0007-x')))).toEqual(
      expect.arrayContaining(['bell\\x07-x', 'bell\\u0007-x']),
    );
  });

  it('adds each line of at least 8 characters of a multi-line secret, and the whole in its escaped forms', () => {
    const secrets = secretsOf(
      bundleWith({ type: 'vault_password', inputs: { password: '  first-line-1\r\nshort\n  second-line-2  \n' } }),
    );
    expect(secrets).toEqual(
      expect.arrayContaining([
        'first-line-1\r\nshort\n  second-line-2',
        'first-line-1\\r\\nshort\\n  second-line-2',
        'first-line-1',
        'second-line-2',
      ]),
    );
    expect(secrets).not.toContain('short');
  });

  it('masks the bundle’s secret values (survey password answers) in the same printed forms as credential secrets', () => {
    const value = `my "pw" it's`;
    const bundle: RunBundle = { ...bundleWith(), extra_vars: { pw: value }, secret_values: [value, 'xy'] };
    const forms = secretsOf(bundle);
    expect(forms).toContain(value);
    expect(forms).toContain(`my \\"pw\\" it's`);
    expect(new Set(forms)).toEqual(new Set(secretsOf(bundleWith(env(value)))));
  });

  it('leaves out values too short to mask without scrubbing ordinary words', () => {
    expect(secretsOf(bundleWith(env('abc'), { type: 'become_password', inputs: { password: ' ab ' } }))).toEqual([]);
    expect(secretsOf(bundleWith(env('abcd')))).toEqual(['abcd']);
  });
});
