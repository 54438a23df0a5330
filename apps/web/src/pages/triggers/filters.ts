// A trigger's filters as typed (globs separated by commas or spaces) and back.
import type { EffectiveTriggerFilters, TriggerEvent, TriggerFilters } from '@baton/contracts';
import { parseWords } from '../templates/spec/vars';

export interface FilterDraft {
  events: TriggerEvent[];
  branches: string;
  tags: string;
}

export const emptyFilters = (): FilterDraft => ({ events: ['push'], branches: '', tags: '' });

export function filterDraftFrom(f: EffectiveTriggerFilters): FilterDraft {
  return { events: f.events, branches: (f.branches ?? []).join(', '), tags: (f.tags ?? []).join(', ') };
}

export function filtersFrom(d: FilterDraft): TriggerFilters {
  const branches = parseWords(d.branches);
  const tags = parseWords(d.tags);
  return {
    events: d.events,
    ...(branches.length ? { branches } : {}),
    ...(tags.length ? { tags } : {}),
  };
}

export function filterWords(f: EffectiveTriggerFilters): string {
  const parts = [f.events.map((e) => (e === 'push' ? 'branch pushes' : 'tag pushes')).join(' and ')];
  if (f.branches?.length) parts.push(`branches ${f.branches.join(', ')}`);
  if (f.tags?.length) parts.push(`tags ${f.tags.join(', ')}`);
  return parts.join('; ');
}
