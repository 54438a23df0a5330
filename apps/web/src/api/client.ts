// The one way the UI talks to the server: the public /v1 API with the session's bearer token.
import type { ProblemDetails } from '@baton/contracts';
import { session } from '../auth/session';

/** A problem+json answer (or a network failure, status 0) as an error the pages can show next to their fields. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: ProblemDetails,
  ) {
    super(problem.detail ?? problem.title);
  }

  /** The messages for one field: problem paths are `body.<field>[.<sub>…]` or `query.<param>`. */
  fieldErrors(field: string): string[] {
    return (this.problem.errors ?? [])
      .filter((e) => {
        const path = e.path.replace(/^(body|query)\./, '');
        return path === field || path.startsWith(`${field}.`) || path.startsWith(`${field}[`);
      })
      .map((e) => e.message);
  }
}

/** Called when the server says the token is no longer good (expired, revoked, user deleted). */
let onUnauthenticated: () => void = () => {};
export function setUnauthenticatedHandler(handler: () => void): void {
  onUnauthenticated = handler;
}

export interface ApiResponse<T> {
  body: T;
  /** the next page's path from `Link: <…>; rel="next"`, when there is one */
  next?: string;
  headers: Headers;
}

export interface RequestOptions {
  body?: unknown;
  signal?: AbortSignal;
  /** sent without the token (sign-in); a 401 is then the answer itself, not an expired session */
  anonymous?: boolean;
  /** a 401 is handled by the caller (checking a stored token), not by sending the user to sign in */
  own401?: boolean;
}

/** Waits before the retries of a read that failed on the network. */
const NETWORK_RETRIES_MS = [250, 1000];

/** `METHOD path` against the API; resolves with the parsed body, rejects with an ApiError. */
export async function request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  const token = session.token();
  if (token && !opts.anonymous) headers.Authorization = `Bearer ${token}`;
  if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
  const init: RequestInit = {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    signal: opts.signal,
  };
  let res: Response;
  for (let attempt = 0; ; attempt++) {
    try {
      res = await fetch(path, init);
      break;
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      // A read that never reached the server (a network switch, a dropped connection) is tried again: reads are
      // safe to repeat. A change is not: the user sees the error and decides.
      if (method === 'GET' && attempt < NETWORK_RETRIES_MS.length) {
        await new Promise((r) => setTimeout(r, NETWORK_RETRIES_MS[attempt]));
        continue;
      }
      throw new ApiError(0, {
        type: 'about:blank',
        title: 'Network error',
        status: 0,
        detail: 'The server could not be reached. Check your connection and try again.',
      });
    }
  }
  const text = await res.text();
  let parsed: unknown = undefined;
  if (text && (res.headers.get('content-type') ?? '').includes('json')) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
  } else if (text) parsed = text;
  if (!res.ok) {
    const problem: ProblemDetails =
      parsed && typeof parsed === 'object' && 'title' in parsed
        ? (parsed as ProblemDetails)
        : { type: 'about:blank', title: res.statusText || `HTTP ${res.status}`, status: res.status };
    if (res.status === 401 && !opts.anonymous && !opts.own401) onUnauthenticated();
    throw new ApiError(res.status, problem);
  }
  return { body: parsed as T, next: nextLink(res.headers.get('link')), headers: res.headers };
}

/** The target of `rel="next"` in a Link header (the server may also send other relations). */
export function nextLink(header: string | null): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(/,(?=\s*<)/)) {
    const m = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (m && /rel="?next"?/.test(m[2]!)) return m[1];
  }
  return undefined;
}

/** Reads outside a cached query; changes go through `useApiMutation` (or `request`). */
export const api = {
  get: <T>(path: string, signal?: AbortSignal) => request<T>('GET', path, { signal }).then((r) => r.body),
};

/** A query string from the given non-empty values. */
export function qs(params: Record<string, string | number | boolean | undefined | null>): string {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') u.set(k, String(v));
  const s = u.toString();
  return s ? `?${s}` : '';
}
