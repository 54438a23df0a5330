// The events a notifier can listen to, with what each means (type-only contracts: these are copies of NOTIFY_EVENTS).
import type { NotifyEvent } from '@baton/contracts';

export const EVENT_CHOICES: Array<{ value: NotifyEvent; explain: string }> = [
  { value: 'run.succeeded', explain: 'a run finished successfully' },
  { value: 'run.failed', explain: 'a run failed or ended in error' },
  { value: 'run.canceled', explain: 'a run was canceled, or its approval rejected or expired' },
  { value: 'run.held', explain: 'a run waits for approval (e-mail also goes to its approvers)' },
  { value: 'run.started', explain: 'a run started on an executor' },
  { value: 'schedule.error', explain: 'a schedule could not start its run' },
  { value: 'worker.lost', explain: 'a run was lost with its worker' },
];

export const KIND_LABELS: Record<string, string> = {
  webhook: 'Webhook (signed JSON)',
  slack: 'Slack-compatible incoming webhook',
  email: 'E-mail (SMTP)',
};
