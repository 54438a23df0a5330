// The seam between the notifications domain (what to send, to whom, when to retry) and the network (how a webhook
// is posted, a Slack message sent, a mail delivered). Transports live in apps/api; tests can use a real local
// receiver through them.
import type { NotifierKind, NotifyEvent } from '@baton/contracts';

/** A run as a notification describes it (the webhook payload's `run`). */
export interface NotifiedRun {
  id: string;
  status: string;
  conclusion: string | null;
  reason: string | null;
  origin: string;
  template: { id: string; name: string } | null;
  project: { id: string; name: string } | null;
  commit: string | null;
  /** per outcome: ok, changed, failed, unreachable, skipped… → host count */
  host_summary: Record<string, number>;
  /** the hosts that failed or were unreachable (at most 50) */
  failed_hosts: string[];
  /** the run's page in the UI */
  url: string;
}

/** One notification: the event, when it happened, and what it is about. */
export interface NotificationMessage {
  event: NotifyEvent | 'test';
  at: string;
  run: NotifiedRun | null;
  /** schedule.error: the schedule and why it could not fire */
  schedule?: { id: string; name: string; error: string } | undefined;
  /** worker.lost: the worker and the runs it held */
  worker?: { name: string; runs: string[] } | undefined;
  /** one line a person reads (Slack text, mail subject) */
  summary: string;
}

/** A notifier as a transport needs it: its kind, its non-secret config and its secrets, opened. */
export interface TransportTarget {
  kind: NotifierKind;
  config: Record<string, unknown>;
  /** webhook: {secret, headers?}; slack: {url}; email: {password?} */
  secrets: Record<string, unknown>;
  /** email only: extra recipients for this message (a held run's approvers), besides config.to */
  recipients?: string[] | undefined;
}

export interface DeliveryContext {
  /** unique per delivery, the same on every attempt: receivers drop duplicates by it (sent as Idempotency-Key) */
  deliveryId: string;
}

/** What one attempt did. Never an exception: a transport answers every failure as a result. */
export interface AttemptResult {
  ok: boolean;
  /** HTTP status or SMTP reply code, when the other side answered */
  code?: number | undefined;
  /** why it failed, in a line (no secrets) */
  error?: string | undefined;
  /** the start of the response body, at most MAX_RESPONSE_EXCERPT characters */
  excerpt?: string | undefined;
  /** false when trying again cannot help (a refused destination, a 4xx other than 408/429) */
  retry: boolean;
}

export type NotifyTransport = (
  target: TransportTarget,
  message: NotificationMessage,
  ctx: DeliveryContext,
) => Promise<AttemptResult>;
