// Whether the AI helpers are available (GET /v1/ai/status): every AI button, form and nav entry hides when not, so
// nobody meets a 503. Saving or removing the AI settings refreshes it (the path is the cache key).
import type { AiStatus } from '@baton/contracts';
import { useApi } from '../../api/hooks';

export const AI_STATUS_PATH = '/v1/ai/status';
export const AI_SETTINGS_PATH = '/v1/settings/ai';
/** What a change of the settings makes stale. */
export const AI_SETTINGS_CHANGED = [AI_SETTINGS_PATH, AI_STATUS_PATH];

/** Whether a provider is configured: null while the status is loading (or cannot be read). */
export function useAiStatus(): boolean | null {
  const q = useApi<AiStatus>(AI_STATUS_PATH, { staleTime: 60_000 });
  return q.data ? q.data.configured : null;
}

/** true once the server says a provider is configured: what hides the AI buttons and entries until then. */
export function useAiConfigured(): boolean {
  return useAiStatus() === true;
}
