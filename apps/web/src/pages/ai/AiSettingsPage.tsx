// /settings/ai — the AI provider (admins): protocol, base URL, model, key, timeout and output budget. The key is
// write-only: the page shows whether one is stored, never the key. When BATON_AI_* configures the provider the
// form is read-only (the server refuses changes then).
import type { AiSettings } from '@baton/contracts';
import { Link } from 'wouter';
import { useApi, useApiMutation } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { ConfirmButton } from '../../ui/Confirm';
import { FormError } from '../../ui/forms';
import { Details, PageHeader } from '../../ui/layout';
import { NotAllowed } from '../../ui/NotAllowed';
import { NotLoaded } from '../../ui/ObjectPage';
import { SubjectName } from '../../ui/AccessPanel';
import { Time } from '../../ui/Time';
import { AiSettingsForm } from './AiSettingsForm';
import { AI_SETTINGS_CHANGED, AI_SETTINGS_PATH } from './useAiStatus';
import './ai.css';

export default function AiSettingsPage() {
  const isAdmin = useHasRole('admin');
  if (!isAdmin)
    return (
      <NotAllowed title="AI settings">
        Only admins configure the AI provider. <Link href="/runs">Back to runs</Link>
      </NotAllowed>
    );
  return <SettingsView />;
}

function SettingsView() {
  const q = useApi<AiSettings>(AI_SETTINGS_PATH);
  const remove = useApiMutation<void, void>('DELETE', AI_SETTINGS_PATH, { invalidate: AI_SETTINGS_CHANGED });
  const s = q.data;
  const stored = s?.source === 'settings';
  return (
    <>
      <PageHeader
        title="AI settings"
        subtitle="The provider behind the advisory AI helpers: explain a run, ask about the fleet, draft a script, propose a run."
        actions={
          stored ? (
            <ConfirmButton
              question="Remove the AI provider?"
              detail={<p>The AI helpers disappear for everyone until a provider is configured again.</p>}
              confirmLabel="Remove"
              disabled={remove.isPending}
              onConfirm={() => remove.mutate()}
            >
              Remove
            </ConfirmButton>
          ) : null
        }
      />
      <FormError error={remove.error} />
      {!s ? (
        <NotLoaded error={q.error} what="Loading the AI settings" />
      ) : (
        <>
          <Details
            items={[
              ['Status', s.configured ? 'configured' : 'not configured: the AI helpers are hidden'],
              [
                'Configured by',
                s.source === 'environment' ? 'the environment (BATON_AI_*)' : stored ? 'this page' : null,
              ],
              ['API key', s.api_key_set ? 'stored (never shown)' : 'none'],
              ['Updated', s.updated_at ? <Time at={s.updated_at} /> : null],
              ['Updated by', s.updated_by ? <SubjectName id={s.updated_by} showKind={false} /> : null],
            ]}
          />
          {s.source === 'environment' ? (
            <div className="banner banner-info" role="note">
              <strong>Configured by the environment</strong>
              <p>
                The BATON_AI_* variables of the server configure the provider, so it cannot be changed here. Change them
                (BATON_AI_PROVIDER, BATON_AI_BASE_URL, BATON_AI_MODEL, BATON_AI_API_KEY…) and restart Baton.
              </p>
            </div>
          ) : null}
          <AiSettingsForm settings={s} />
        </>
      )}
    </>
  );
}
