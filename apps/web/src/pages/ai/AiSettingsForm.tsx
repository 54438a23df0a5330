// The AI provider form (loaded once; what it sends is what it shows): an empty key field keeps the stored key (the server forgets it when the base URL changes,
// so a key never goes to another server than the one it was given for).
import type { AiProviderName, AiSettings, PutAiSettingsBody } from '@baton/contracts';
import { type FormEvent, useState } from 'react';
import { useApiMutation } from '../../api/hooks';
import { Field, FormError, SubmitRow } from '../../ui/forms';
import { AI_SETTINGS_CHANGED, AI_SETTINGS_PATH } from './useAiStatus';

const DEFAULT_BASE_URL: Record<AiProviderName, string> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
};
const FIELDS = ['provider', 'base_url', 'model', 'api_key', 'timeout_s', 'max_output_tokens'];

/** A whole number, or what was typed when it is not one (the server then says what is wrong beside the field). */
const numberOrText = (text: string): number | undefined =>
  text.trim() === '' ? undefined : Number.isNaN(Number(text)) ? (text as unknown as number) : Number(text);

export function AiSettingsForm({ settings: s }: { settings: AiSettings }) {
  const readOnly = s.source === 'environment';
  const [provider, setProvider] = useState<AiProviderName>(s.provider ?? 'openai');
  const [baseUrl, setBaseUrl] = useState(s.base_url ?? DEFAULT_BASE_URL[s.provider ?? 'openai']);
  const [model, setModel] = useState(s.model ?? '');
  const [apiKey, setApiKey] = useState('');
  const [timeout, setTimeoutS] = useState(String(s.timeout_s));
  const [maxTokens, setMaxTokens] = useState(String(s.max_output_tokens));
  const save = useApiMutation<PutAiSettingsBody, AiSettings>('PUT', AI_SETTINGS_PATH, {
    invalidate: AI_SETTINGS_CHANGED,
    // The key is write-only: once stored, the field empties again ("leave empty to keep it").
    onSuccess: () => setApiKey(''),
  });

  function pickProvider(next: AiProviderName) {
    // The other protocol's default URL is never right for this one; a URL of one's own is kept.
    if (baseUrl === '' || baseUrl === DEFAULT_BASE_URL[provider]) setBaseUrl(DEFAULT_BASE_URL[next]);
    setProvider(next);
  }
  function submit(e: FormEvent) {
    e.preventDefault();
    const body: PutAiSettingsBody = { provider, base_url: baseUrl.trim(), model: model.trim() };
    if (apiKey !== '') body.api_key = apiKey;
    const t = numberOrText(timeout);
    const m = numberOrText(maxTokens);
    if (t !== undefined) body.timeout_s = t;
    if (m !== undefined) body.max_output_tokens = m;
    save.mutate(body);
  }
  const keyHint = readOnly
    ? 'Set by BATON_AI_API_KEY or BATON_AI_API_KEY_FILE.'
    : s.api_key_set
      ? 'A key is stored. Leave this empty to keep it; a new base URL needs the key again.'
      : 'Leave empty for a server that needs no key (a local Ollama, vLLM…).';
  return (
    <form className="card" onSubmit={submit} noValidate aria-label="AI provider">
      <fieldset disabled={readOnly} className="ai-settings">
        <legend>Provider</legend>
        <Field label="Protocol" name="provider" error={save.error}>
          {(p) => (
            <select {...p} value={provider} onChange={(e) => pickProvider(e.target.value as AiProviderName)}>
              <option value="openai">OpenAI-compatible (OpenAI, Azure, vLLM, Ollama, LM Studio)</option>
              <option value="anthropic">Anthropic messages</option>
            </select>
          )}
        </Field>
        <Field
          label="Base URL"
          name="base_url"
          error={save.error}
          hint={
            provider === 'openai'
              ? 'Includes /v1, e.g. https://api.openai.com/v1'
              : 'Without /v1, e.g. https://api.anthropic.com'
          }
        >
          {(p) => <input {...p} type="url" value={baseUrl} onChange={(e) => setBaseUrl(e.target.value)} />}
        </Field>
        <Field label="Model" name="model" error={save.error} hint="e.g. gpt-4o-mini, claude-sonnet-4-5, llama3.1">
          {(p) => <input {...p} value={model} onChange={(e) => setModel(e.target.value)} />}
        </Field>
        <Field label="API key" name="api_key" error={save.error} hint={keyHint}>
          {(p) => (
            <input
              {...p}
              type="password"
              autoComplete="new-password"
              value={apiKey}
              placeholder={s.api_key_set ? '(stored)' : ''}
              onChange={(e) => setApiKey(e.target.value)}
            />
          )}
        </Field>
        <Field label="Timeout (seconds)" name="timeout_s" error={save.error} hint="1 to 600">
          {(p) => (
            <input
              {...p}
              type="number"
              min={1}
              max={600}
              value={timeout}
              onChange={(e) => setTimeoutS(e.target.value)}
            />
          )}
        </Field>
        <Field label="Maximum output tokens" name="max_output_tokens" error={save.error} hint="64 to 32000">
          {(p) => (
            <input
              {...p}
              type="number"
              min={64}
              max={32000}
              value={maxTokens}
              onChange={(e) => setMaxTokens(e.target.value)}
            />
          )}
        </Field>
      </fieldset>
      <FormError error={save.error} fields={FIELDS} />
      {save.isSuccess ? (
        <p role="status" className="ai-saved">
          Saved. The AI helpers are on.
        </p>
      ) : null}
      {readOnly ? null : (
        <SubmitRow>
          <button type="submit" className="btn btn-primary" disabled={save.isPending}>
            Save
          </button>
        </SubmitRow>
      )}
    </form>
  );
}
