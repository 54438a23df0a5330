// Downloads an API answer as a file: fetched with the bearer token (never in a URL), saved from a Blob.
import type { ProblemDetails } from '@baton/contracts';
import { ApiError } from '../../api/client';
import { session } from '../../auth/session';

export async function downloadFromApi(path: string, fallbackName: string): Promise<void> {
  const token = session.token();
  const res = await fetch(path, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  if (!res.ok) {
    const problem = (await res.json().catch(() => null)) as ProblemDetails | null;
    throw new ApiError(res.status, problem ?? { type: 'about:blank', title: res.statusText, status: res.status });
  }
  const blob = await res.blob();
  const name = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? fallbackName;
  const url = URL.createObjectURL(blob);
  try {
    const a = document.createElement('a');
    a.href = url;
    a.download = name;
    document.body.append(a);
    a.click();
    a.remove();
  } finally {
    // Revoked on the next turn: the click has started the download by then.
    setTimeout(() => URL.revokeObjectURL(url), 0);
  }
}
