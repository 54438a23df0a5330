// A trigger's filters: which pushes fire it.
import type { EffectiveTriggerFilters } from '@baton/contracts';
import { matchesAnyGlob } from '../common/glob.js';
import type { PushEvent } from './push-event.js';

// The globs themselves live in common/glob.ts (approval policies use them too); re-exported for older callers.
export { globToRegExp, matchesAnyGlob } from '../common/glob.js';

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
