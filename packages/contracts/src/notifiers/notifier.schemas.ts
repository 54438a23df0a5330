// Notifications (issue 17): notifiers tell people and systems when runs finish, fail, start or wait for approval,
// when a schedule cannot fire and when a worker is lost. Delivery is at least once, from a durable outbox.
import { z } from 'zod';
import { idOf, NO_CONTROL_CHARACTERS, ObjectName, Timestamp } from '../common/common.schemas.js';
import { tryParseUrl } from '../network/safe-url.js';
import { RunOrigin } from '../runs/run.schemas.js';

export const NOTIFIER_KINDS = ['webhook', 'slack', 'email'] as const;
export const NotifierKind = z.enum(NOTIFIER_KINDS);
export type NotifierKind = z.infer<typeof NotifierKind>;

export const NOTIFY_EVENTS = [
  'run.succeeded',
  'run.failed',
  'run.canceled',
  'run.held',
  'run.started',
  'schedule.error',
  'worker.lost',
] as const;
export const NotifyEvent = z.enum(NOTIFY_EVENTS);
export type NotifyEvent = z.infer<typeof NotifyEvent>;

/** Retries stop this long after the first attempt; the delivery is then `dead`. */
export const MAX_DELIVERY_AGE_S = 24 * 3600;
/** Each attempt's whole time (connect, send, answer). */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** Response bodies kept per attempt, at most. */
export const MAX_RESPONSE_EXCERPT = 1024;

/** Why a notification URL is refused before any DNS lookup (addresses are checked again after it), or undefined. */
export function notifyUrlProblem(text: string): string | undefined {
  if (text.length === 0 || text.length > 2048) return 'must be 1 to 2048 characters';
  // eslint-disable-next-line no-control-regex -- a URL with spaces or control characters is not what gets fetched
  if (/[\s\u0000-\u001f\u007f]/.test(text)) return 'must not contain spaces or control characters';
  const url = tryParseUrl(text);
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.hostname === '')
    return 'must be an http:// or https:// URL';
  if (url.username || url.password) return 'must not carry a user or password; use headers or the signing secret';
  return undefined;
}

const NotifyUrl = z
  .string()
  .superRefine((u, ctx) => {
    const problem = notifyUrlProblem(u);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .meta({ format: 'uri', description: 'http(s); private and loopback addresses only with BATON_NOTIFY_ALLOW_PRIVATE' });

const HeaderName = z
  .string()
  .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/, 'a header name (RFC 9110 token)')
  .refine(
    (h) => !['host', 'content-length', 'content-type', 'connection', 'transfer-encoding'].includes(h.toLowerCase()),
    'Baton sets this header itself',
  )
  .refine((h) => !h.toLowerCase().startsWith('x-baton-'), 'X-Baton-* headers are Baton’s own');
const HeaderValue = z
  .string()
  .max(4096)
  .regex(/^[\t\x20-\x7e\x80-\xff]*$/, 'printable header text');

export const WebhookConfig = z.strictObject({
  url: NotifyUrl,
  headers: z
    .record(HeaderName, HeaderValue)
    .refine((h) => Object.keys(h).length <= 20, 'at most 20 headers')
    .optional()
    .meta({ description: 'extra headers sent with every delivery; sealed at rest, shown by name only' }),
});
export const SlackConfig = z.strictObject({
  url: NotifyUrl.meta({
    description:
      'a Slack-compatible incoming-webhook URL (Slack, Mattermost, Rocket.Chat); secret: sealed, never shown',
  }),
});
const Email = z.email().max(254);
export const EmailConfig = z.strictObject({
  host: z
    .string()
    .min(1)
    .max(253)
    .regex(/^[A-Za-z0-9.:[\]-]+$/, 'a host name or address'),
  port: z.number().int().min(1).max(65535).default(587),
  security: z
    .enum(['starttls', 'tls', 'none'])
    .default('starttls')
    .meta({ description: 'starttls: upgrade required; tls: TLS from the first byte (port 465); none: plain (tests)' }),
  username: z.string().min(1).max(256).regex(NO_CONTROL_CHARACTERS).optional(),
  password: z.string().min(1).max(1024).optional().meta({ description: 'secret: sealed, never shown' }),
  from: Email,
  to: z.array(Email).min(1).max(50),
});

export const NotifierMatch = z
  .strictObject({
    templates: z.array(idOf('tpl')).min(1).max(100).optional(),
    projects: z.array(idOf('prj')).min(1).max(100).optional(),
    schedules: z.array(idOf('sch')).min(1).max(100).optional(),
    triggers: z.array(idOf('trg')).min(1).max(100).optional(),
    origins: z.array(RunOrigin).min(1).max(20).optional(),
  })
  .meta({
    id: 'NotifierMatch',
    description: 'every given field must hold (a list holds when any item does); none given: every run',
  });
export type NotifierMatch = z.infer<typeof NotifierMatch>;

const Events = z
  .array(NotifyEvent)
  .min(1)
  .max(NOTIFY_EVENTS.length)
  .refine((e) => new Set(e).size === e.length, 'must not repeat an event');

const body = <K extends NotifierKind, C extends z.ZodType>(kind: K, config: C) =>
  z.strictObject({ name: ObjectName, kind: z.literal(kind), config, events: Events, match: NotifierMatch.optional() });

export const NotifierCreateBody = z
  .discriminatedUnion('kind', [body('webhook', WebhookConfig), body('slack', SlackConfig), body('email', EmailConfig)])
  .meta({ id: 'NotifierCreateBody' });
export type NotifierCreateBody = z.output<typeof NotifierCreateBody>;

/** Update: given fields replace; `config` is merged over the stored one (secrets omitted are kept), checked whole. */
export const NotifierUpdateBody = z
  .strictObject({
    name: ObjectName.optional(),
    config: z.record(z.string().max(64), z.unknown()).optional(),
    events: Events.optional(),
    match: NotifierMatch.nullable().optional(),
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), 'give at least one of name, config, events, match')
  .meta({ id: 'NotifierUpdateBody' });
export type NotifierUpdateBody = z.output<typeof NotifierUpdateBody>;

export const Notifier = z
  .object({
    id: z.string(),
    name: z.string(),
    kind: NotifierKind,
    config: z
      .record(z.string(), z.unknown())
      .meta({ description: 'without secrets: webhook url and header names, email server and addresses' }),
    secret_fields: z.array(z.string()).meta({ description: 'which secrets are set, never their values' }),
    events: z.array(NotifyEvent),
    match: NotifierMatch.nullable(),
    created_by: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Notifier' });
export type Notifier = z.infer<typeof Notifier>;

/** What creating a webhook notifier (and rotating its secret) answers: the signing secret, shown only then. */
export const NotifierWithSecret = Notifier.extend({ secret: z.string() }).meta({ id: 'NotifierWithSecret' });
export type NotifierWithSecret = z.infer<typeof NotifierWithSecret>;

export const DELIVERY_STATUSES = ['pending', 'retrying', 'delivered', 'dead'] as const;
export const DeliveryStatus = z.enum(DELIVERY_STATUSES);

export const Delivery = z
  .object({
    id: z.string(),
    notifier_id: z.string(),
    event: NotifyEvent.or(z.literal('test')),
    run_id: z.string().nullable(),
    status: DeliveryStatus,
    attempts: z.number().int(),
    next_attempt_at: Timestamp.nullable(),
    last_attempt_at: Timestamp.nullable(),
    response_code: z.number().int().nullable(),
    error: z.string().nullable(),
    response_excerpt: z
      .string()
      .nullable()
      .meta({ description: `at most ${MAX_RESPONSE_EXCERPT} characters` }),
    created_at: Timestamp,
  })
  .meta({ id: 'Delivery' });
export type Delivery = z.infer<typeof Delivery>;

export const NotifierIdParams = z.strictObject({ id: idOf('ntf') });
