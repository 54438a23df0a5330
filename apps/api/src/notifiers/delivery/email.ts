// E-mail over SMTP with nodemailer: the server's address checked like every destination and pinned, STARTTLS
// required / TLS from the first byte / plain, one deadline per attempt, plain text and HTML bodies.
import type { AttemptResult, NotificationMessage, TransportTarget } from '@baton/core';
import { checkedDestination, type Resolve } from './destination.js';
import { emailHtml, emailText } from './message-text.js';

interface EmailSettings {
  host: string;
  port: number;
  security: 'starttls' | 'tls' | 'none';
  username?: string;
  from: string;
  to: string[];
}

/** SMTP reply classes: 4xx is "try again later", 5xx is final. Connection failures are worth another try. */
const retryableSmtp = (code: number | undefined) => code === undefined || (code >= 400 && code < 500);

export async function sendEmail(
  target: TransportTarget,
  message: NotificationMessage,
  deliveryId: string,
  opts: { allowPrivate: boolean; timeoutMs: number; resolve?: Resolve | undefined; ca?: string | undefined },
): Promise<AttemptResult> {
  const cfg = target.config as unknown as EmailSettings;
  const dest = await checkedDestination(cfg.host, { allowPrivate: opts.allowPrivate, resolve: opts.resolve });
  if (!dest.ok) return { ok: false, error: dest.reason, retry: dest.retry };
  const password = typeof target.secrets.password === 'string' ? target.secrets.password : undefined;
  // Loaded at the first e-mail, not at start: most servers never send one (start-up time and memory).
  const { default: nodemailer } = await import('nodemailer');
  const transport = nodemailer.createTransport({
    // The checked address, with the configured name for TLS: no second lookup can lead elsewhere.
    host: dest.address.address,
    port: cfg.port,
    secure: cfg.security === 'tls',
    requireTLS: cfg.security === 'starttls',
    ignoreTLS: cfg.security === 'none',
    tls: { servername: cfg.host, ...(opts.ca ? { ca: opts.ca } : {}) },
    ...(cfg.username ? { auth: { user: cfg.username, pass: password ?? '' } } : {}),
    connectionTimeout: opts.timeoutMs,
    greetingTimeout: opts.timeoutMs,
    socketTimeout: opts.timeoutMs,
  });
  const to = [...new Set([...cfg.to, ...(target.recipients ?? [])])];
  let deadline: NodeJS.Timeout | undefined;
  try {
    const sent = await Promise.race([
      transport.sendMail({
        from: cfg.from,
        to,
        subject: message.summary.slice(0, 200),
        text: emailText(message),
        html: emailHtml(message),
        headers: { 'X-Baton-Delivery': deliveryId, 'X-Baton-Event': message.event },
      }),
      new Promise<never>((_, reject) => {
        deadline = setTimeout(
          () =>
            reject(
              Object.assign(new Error(`no answer from ${cfg.host} within ${opts.timeoutMs} ms`), { code: 'ETIMEDOUT' }),
            ),
          opts.timeoutMs,
        );
      }),
    ]);
    const code = Number(/^(\d{3})/.exec(String(sent.response ?? ''))?.[1] ?? 250);
    return { ok: true, code, excerpt: String(sent.response ?? '').slice(0, 200), retry: false };
  } catch (err) {
    const e = err as { responseCode?: number; code?: string; message?: string };
    const reason = e.responseCode
      ? `${cfg.host} answered ${e.responseCode}`
      : `sending mail via ${cfg.host} failed: ${e.code ?? e.message ?? 'error'}`;
    return { ok: false, code: e.responseCode, error: reason, retry: retryableSmtp(e.responseCode) };
  } finally {
    clearTimeout(deadline);
    transport.close();
  }
}
