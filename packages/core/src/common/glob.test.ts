import { describe, expect, it } from '@jest/globals';
import { compileGlobs, globToRegExp, matchesAnyGlob, matchesGlob } from './glob.js';

/** [glob, name, matches] */
const CASES: Array<[string, string, boolean]> = [
  ['release/*', 'release/1.2', true],
  ['release/*', 'release/1.2/hotfix', false],
  ['release/**', 'release/1.2/hotfix', true],
  ['release/**', 'release/', true],
  ['v?', 'v1', true],
  ['v?', 'v10', false],
  ['v?', 'v', false],
  ['a?b', 'a/b', false],
  ['main', 'main', true],
  ['main', 'mainx', false],
  ['main', 'xmain', false],
  ['v1.2', 'v1x2', false],
  ['a(b', 'a(b', true],
  ['[x]+', '[x]+', true],
  ['[x]+', 'x', false],
  ['feature-*', 'feature-login', true],
  ['feature-*', 'feature', false],
  ['*', '', true],
  ['', '', true],
  ['', 'a', false],
  ['*', 'a/b', false],
  ['**', 'a/b', true],
  ['**/*.yml', 'deploy/site.yml', true],
  ['**/*.yml', 'a/b/c.yml', true],
  ['**/*.yml', 'site.yml', false],
  ['*.yml', 'site.yml', true],
  ['*.yml', 'roles/site.yml', false],
  ['a***b', 'a/x/b', true],
  ['a*b*c', 'abc', true],
  ['a*b*c', 'axxbyyc', true],
  ['a*b*c', 'axxbyy', false],
  ['a*/b', 'ax/b', true],
  ['a*/b', 'a/x/b', false],
  ['$^.+|{}\\', '$^.+|{}\\', true],
  ['web-??.example.com', 'web-01.example.com', true],
  ['web-??.example.com', 'web-01xexample.com', false],
  ['[2001:db8::*]', '[2001:db8::1]', true],
  ['2001:db8::?', '2001:db8::1', true],
  ['bücher-*', 'bücher-01', true],
  ['?.de', 'ü.de', true],
  ['?', '😀', true],
  ['??', '😀', false],
  ['*😀', 'x😀', true],
];

describe('globs', () => {
  it.each(CASES)('%j on %j → %s', (glob, name, expected) => {
    expect(matchesGlob(name, glob)).toBe(expected);
    // The regular expression form says the same.
    expect(globToRegExp(glob).test(name)).toBe(expected);
  });

  it('matches any of several globs, and none of none', () => {
    expect(matchesAnyGlob('release/2', ['main', 'release/*'])).toBe(true);
    expect(matchesAnyGlob('feature/x', ['main', 'release/*'])).toBe(false);
    expect(matchesAnyGlob('main', [])).toBe(false);
    const m = compileGlobs(['db-*', 'web?']);
    expect(['db-1', 'web1', 'web12', 'cache'].map(m)).toEqual([true, true, false, false]);
  });

  it('takes time proportional to glob × name, not exponential (a backtracking regex would take ages here)', () => {
    const glob = `${'*a'.repeat(60)}b`;
    const name = 'a'.repeat(500);
    expect(matchesGlob(name, glob)).toBe(false);
    expect(matchesGlob(`${name}b`, glob)).toBe(true);
    expect(matchesGlob('a'.repeat(2000), '**a**a**a**a**a**a**a**a**a**a**a**a**a**a**a**a**b')).toBe(false);
  });
});
