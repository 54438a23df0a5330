// The transports behind NotifyTransport: a signed webhook POST, a Slack-compatible incoming webhook, and SMTP mail.
import crypto from 'node:crypto';
import { DELIVERY_TIMEOUT_MS } from '@baton/contracts';
import type { NotifyTransport } from '@baton/core';
import type { Resolve } from './destination.js';
import { sendEmail } from './email.js';
import { postNotification } from './http-post.js';
import { slackText, webhookPayload } from './message-text.js';

export interface TransportOptions {
  allowPrivate: boolean;
  timeoutMs?: number | undefined;
  resolve?: Resolve | undefined;
  ca?: string | undefined;
}

export function createNotifyTransport(opts: TransportOptions): NotifyTransport {
  const timeoutMs = opts.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const common = { allowPrivate: opts.allowPrivate, timeoutMs, resolve: opts.resolve, ca: opts.ca };
  return async (target, message, ctx) => {
    if (target.kind === 'webhook') {
      const body = JSON.stringify(webhookPayload(message));
      const secret = String(target.secrets.secret ?? '');
      const signature = crypto.createHmac('sha256', secret).update(body).digest('hex');
      const extra = (target.secrets.headers ?? {}) as Record<string, string>;
      return postNotification({
        ...common,
        url: String(target.config.url),
        body,
        // Baton's own headers win over the configured ones (which cannot name them anyway).
        headers: {
          ...extra,
          'Content-Type': 'application/json',
          'User-Agent': 'Baton',
          'X-Baton-Event': message.event,
          'X-Baton-Delivery': ctx.deliveryId,
          'Idempotency-Key': ctx.deliveryId,
          'X-Baton-Signature-256': `sha256=${signature}`,
        },
      });
    }
    if (target.kind === 'slack') {
      return postNotification({
        ...common,
        url: String(target.secrets.url),
        secretUrl: true,
        body: JSON.stringify({ text: slackText(message) }),
        headers: { 'Content-Type': 'application/json', 'User-Agent': 'Baton', 'Idempotency-Key': ctx.deliveryId },
      });
    }
    return sendEmail(target, message, ctx.deliveryId, common);
  };
}
