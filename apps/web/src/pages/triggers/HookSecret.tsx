// The hook URL and signing secret right after create or rotate: the only time the secret is ever shown.
import type { TriggerWithSecret } from '@baton/contracts';
import { CopyButton, SecretOnce } from '../../ui/layout';

export function HookSecret({ trigger, onDone }: { trigger: TriggerWithSecret; onDone(): void }) {
  return (
    <section className="form-section" aria-label="Hook URL and signing secret">
      <p>
        Hook URL (the forge posts pushes here): <code data-testid="hook-url">{trigger.hook_url}</code>{' '}
        <CopyButton text={trigger.hook_url} label="Copy URL" />
      </p>
      <SecretOnce label="Signing secret" value={trigger.secret} onDone={onDone} />
      <p className="hint">
        Set it as the webhook's secret in GitHub or Gitea (signature header), or as GitLab's secret token. Deliveries
        without a valid signature are refused while enforcement is on.
      </p>
    </section>
  );
}
