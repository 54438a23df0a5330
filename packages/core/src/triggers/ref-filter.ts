// A trigger's filters: which pushes fire it.
import type { EffectiveTriggerFilters } from '@baton/contracts';
import type { PushEvent } from './push-event.js';

/**
 * A branch or tag glob as a regular expression: `**` any characters, `*` any characters but `/`, `?` one character
 * but `/`; everything else literal. `release/*` matches `release/1.2` but not `release/1.2/hotfix`.
 */
export function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      re += '.*';
      i++;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\/-]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 'u');
}

export const matchesAnyGlob = (name: string, globs: readonly string[]): boolean =>
  globs.some((g) => globToRegExp(g).test(name));

/** Why this push does not fire the trigger, or undefined when it does. */
export function filteredOut(push: PushEvent, filters: EffectiveTriggerFilters): string | undefined {
  const what = push.kind === 'push' ? 'branch' : 'tag';
  if (!filters.events.includes(push.kind))
    return `${push.kind === 'push' ? 'branch pushes' : 'tag pushes'} do not fire this trigger (events: ${filters.events.join(', ')})`;
  if (push.deleted) return `${what} ${push.name} was deleted`;
  const globs = push.kind === 'push' ? filters.branches : filters.tags;
  if (globs && !matchesAnyGlob(push.name, globs))
    return `${what} ${push.name} matches none of the trigger's ${what} filters`;
  return undefined;
}
