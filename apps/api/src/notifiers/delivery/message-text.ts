// What a notification says to people (Slack text, mail bodies) and to systems (the webhook JSON).
import type { NotificationMessage } from '@baton/core';

/** The webhook payload: `{event, run, at}` plus the schedule or worker it is about. */
export function webhookPayload(m: NotificationMessage): Record<string, unknown> {
  return {
    event: m.event,
    at: m.at,
    run: m.run,
    ...(m.schedule ? { schedule: m.schedule } : {}),
    ...(m.worker ? { worker: m.worker } : {}),
    ...(m.event === 'test' ? { summary: m.summary } : {}),
  };
}

/** Slack mrkdwn escapes: &, < and > (the link syntax is <url|text>). */
const mrkdwn = (s: string) => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/** A short Slack-compatible message: the outcome, the failed hosts, a link. */
export function slackText(m: NotificationMessage): string {
  const lines = [mrkdwn(m.summary)];
  if (m.run?.failed_hosts.length) lines.push(`Failed hosts: ${m.run.failed_hosts.slice(0, 10).map(mrkdwn).join(', ')}`);
  if (m.run) lines.push(`<${m.run.url}|Open run ${m.run.id}>`);
  return lines.join('\n');
}
