// The run history's filters live in the address's query string, so a filtered view is a bookmark and survives reload.
import { qs } from '../../api/client';

/** Query parameters of GET /v1/runs the history page offers as controls. */
export const FILTER_KEYS = [
  'status',
  'conclusion',
  'origin',
  'project',
  'template',
  'inventory',
  'host',
  'since',
] as const;
export type FilterKey = (typeof FILTER_KEYS)[number];
export type Filters = Partial<Record<FilterKey, string>>;

/** `since` presets: the address keeps the preset, the request gets the instant it stands for. */
export const SINCE_PRESETS: Array<{ value: string; label: string; seconds: number }> = [
  { value: '1h', label: 'Last hour', seconds: 3600 },
  { value: '24h', label: 'Last 24 hours', seconds: 24 * 3600 },
  { value: '7d', label: 'Last 7 days', seconds: 7 * 24 * 3600 },
  { value: '30d', label: 'Last 30 days', seconds: 30 * 24 * 3600 },
];

export function readFilters(params: URLSearchParams): Filters {
  const f: Filters = {};
  for (const k of FILTER_KEYS) {
    const v = params.get(k);
    if (v) f[k] = v;
  }
  return f;
}

/** The instant a `since` value stands for: a preset counts back from `now`; anything else goes to the API as given. */
export function sinceInstant(since: string | undefined, now: number): string | undefined {
  if (!since) return undefined;
  const preset = SINCE_PRESETS.find((p) => p.value === since);
  return preset ? new Date(now - preset.seconds * 1000).toISOString() : since;
}

/** GET /v1/runs for the filters (page size from the address's `limit`, when given). */
export function runsPath(filters: Filters, since: string | undefined, limit: string | null): string {
  return `/v1/runs${qs({ ...filters, since, limit })}`;
}

/** The query string with one filter changed (an empty value removes it). */
export function withFilter(prev: URLSearchParams, key: FilterKey, value: string): URLSearchParams {
  const next = new URLSearchParams(prev);
  if (value) next.set(key, value);
  else next.delete(key);
  return next;
}

/** The query string without any filter (the page size stays). */
export function withoutFilters(prev: URLSearchParams): URLSearchParams {
  const next = new URLSearchParams(prev);
  for (const k of FILTER_KEYS) next.delete(k);
  return next;
}
