// Server state through TanStack Query: one cache, refetch on focus, paging through the API's cursors.
import {
  type QueryKey,
  useInfiniteQuery,
  useMutation,
  useQuery,
  useQueryClient,
  type UseQueryOptions,
} from '@tanstack/react-query';
import { api, type ApiError, request } from './client';

/** GET `path` (null: not yet, e.g. waiting for an id). The path is the cache key. */
export function useApi<T>(
  path: string | null,
  options: Omit<UseQueryOptions<T, ApiError>, 'queryKey' | 'queryFn'> = {},
) {
  return useQuery<T, ApiError>({
    queryKey: [path],
    queryFn: ({ signal }) => api.get<T>(path!, signal),
    enabled: path !== null && (options.enabled ?? true),
    ...options,
  });
}

/** Polling refetches every loaded page: beyond this many, a list stops polling. */
const LIVE_PAGES_AT_MOST = 3;

/**
 * A list paged by `Link: rel="next"`: `items` holds every page loaded so far; `loadMore` fetches the next.
 * `refetchInterval` keeps it live (each loaded page is fetched again, so only while a few pages are loaded: deeper
 * in the history it refreshes when the window regains focus).
 */
export function usePagedList<T>(path: string | null, opts: { refetchInterval?: number } = {}) {
  const q = useInfiniteQuery<{ items: T[]; next?: string }, ApiError>({
    queryKey: [path, 'paged'],
    queryFn: async ({ pageParam, signal }) => {
      const r = await request<T[]>('GET', (pageParam as string | undefined) ?? path!, { signal });
      return { items: r.body, next: r.next };
    },
    initialPageParam: undefined,
    getNextPageParam: (last) => last.next,
    enabled: path !== null,
    refetchInterval: (query) =>
      (query.state.data?.pages.length ?? 1) <= LIVE_PAGES_AT_MOST ? (opts.refetchInterval ?? false) : false,
  });
  return {
    items: q.data?.pages.flatMap((p) => p.items) ?? [],
    isLoading: q.isLoading,
    error: q.error,
    hasMore: q.hasNextPage,
    loadingMore: q.isFetchingNextPage,
    loadMore: () => void q.fetchNextPage(),
    refetch: () => void q.refetch(),
  };
}

/** A change (POST/PUT/DELETE) that refreshes the given cached paths afterwards (prefix match on the path). */
export function useApiMutation<TBody, TResult>(
  method: 'POST' | 'PUT' | 'DELETE',
  path: string | ((body: TBody) => string),
  opts: { invalidate?: string[]; onSuccess?: (result: TResult, body: TBody) => void } = {},
) {
  const client = useQueryClient();
  return useMutation<TResult, ApiError, TBody>({
    mutationFn: async (body) => {
      const p = typeof path === 'function' ? path(body) : path;
      const r = await request<TResult>(method, p, method === 'DELETE' ? {} : { body: body ?? {} });
      return r.body;
    },
    onSuccess: async (result, body) => {
      await invalidatePaths(client, opts.invalidate ?? []);
      opts.onSuccess?.(result, body);
    },
  });
}

/** Marks every cached query whose path starts with one of `prefixes` stale (and refetches the visible ones). */
export function invalidatePaths(client: ReturnType<typeof useQueryClient>, prefixes: string[]) {
  return client.invalidateQueries({
    predicate: (q) => {
      const key = q.queryKey as QueryKey;
      return typeof key[0] === 'string' && prefixes.some((p) => (key[0] as string).startsWith(p));
    },
  });
}
