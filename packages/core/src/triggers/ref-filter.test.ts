import { describe, expect, it } from '@jest/globals';
import { effectiveTriggerFilters } from '@baton/contracts';
import type { PushEvent } from './push-event.js';
import { filteredOut, globToRegExp, matchesAnyGlob } from './ref-filter.js';

const push = (ref: string, over: Partial<PushEvent> = {}): PushEvent => {
  const kind = ref.startsWith('refs/tags/') ? 'tag_push' : 'push';
  return {
    kind,
    ref,
    name: ref.replace(/^refs\/(heads|tags)\//, ''),
    commit: 'a'.repeat(40),
    after: 'a'.repeat(40),
    deleted: false,
    repository: { urls: [], fullName: undefined },
    ...over,
  };
};

describe('globs', () => {
  it('* stays within a path part, ** crosses them, ? is one character, the rest is literal', () => {
    expect(matchesAnyGlob('release/1.2', ['release/*'])).toBe(true);
    expect(matchesAnyGlob('release/1.2/hotfix', ['release/*'])).toBe(false);
    expect(matchesAnyGlob('release/1.2/hotfix', ['release/**'])).toBe(true);
    expect(matchesAnyGlob('v1', ['v?'])).toBe(true);
    expect(matchesAnyGlob('v10', ['v?'])).toBe(false);
    expect(matchesAnyGlob('main', ['main'])).toBe(true);
    expect(matchesAnyGlob('mainx', ['main'])).toBe(false);
    expect(matchesAnyGlob('v1x2', ['v1.2'])).toBe(false);
    expect(matchesAnyGlob('a(b', ['a(b'])).toBe(true);
    expect(globToRegExp('[x]+').test('[x]+')).toBe(true);
  });
});

describe('filters', () => {
  it('defaults: branch pushes only; tags alone select tag pushes; both select both', () => {
    expect(effectiveTriggerFilters(undefined)).toEqual({ events: ['push'] });
    expect(effectiveTriggerFilters({ tags: ['v*'] })).toEqual({ events: ['tag_push'], tags: ['v*'] });
    expect(effectiveTriggerFilters({ branches: ['main'], tags: ['v*'] })).toEqual({
      events: ['push', 'tag_push'],
      branches: ['main'],
      tags: ['v*'],
    });
    expect(effectiveTriggerFilters({ events: ['tag_push', 'push', 'push'] })).toEqual({ events: ['push', 'tag_push'] });
  });

  it('says why a push does not fire', () => {
    const f = effectiveTriggerFilters({ branches: ['main', 'release/*'], tags: ['v*'] });
    expect(filteredOut(push('refs/heads/main'), f)).toBeUndefined();
    expect(filteredOut(push('refs/heads/release/2'), f)).toBeUndefined();
    expect(filteredOut(push('refs/heads/feature/x'), f)).toMatch(/feature\/x matches none/);
    expect(filteredOut(push('refs/tags/v1'), f)).toBeUndefined();
    expect(filteredOut(push('refs/tags/nightly'), f)).toMatch(/tag nightly matches none/);
    expect(filteredOut(push('refs/heads/main', { deleted: true }), f)).toBe('branch main was deleted');
    expect(filteredOut(push('refs/tags/v1', { deleted: true }), f)).toBe('tag v1 was deleted');
    expect(filteredOut(push('refs/tags/v1'), effectiveTriggerFilters({}))).toMatch(/tag pushes do not fire/);
  });
});
