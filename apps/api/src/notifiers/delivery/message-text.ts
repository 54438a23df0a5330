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

/** The plain-text mail body. */
export function emailText(m: NotificationMessage): string {
  const lines = [m.summary, ''];
  if (m.run) {
    lines.push(`Run: ${m.run.id}`, `Status: ${m.run.status}${m.run.conclusion ? ` (${m.run.conclusion})` : ''}`);
    if (m.run.template) lines.push(`Template: ${m.run.template.name}`);
    if (m.run.failed_hosts.length) lines.push(`Failed hosts: ${m.run.failed_hosts.join(', ')}`);
    lines.push('', m.run.url);
  }
  if (m.schedule) lines.push(`Schedule: ${m.schedule.name}`, `Error: ${m.schedule.error}`);
  return lines.join('\n');
}

const html = (s: string) =>
  s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');

/** The HTML mail body: the same facts, every value escaped. */
export function emailHtml(m: NotificationMessage): string {
  const rows: Array<[string, string]> = [];
  if (m.run) {
    rows.push(['Run', m.run.id], ['Status', `${m.run.status}${m.run.conclusion ? ` (${m.run.conclusion})` : ''}`]);
    if (m.run.template) rows.push(['Template', m.run.template.name]);
    if (m.run.failed_hosts.length) rows.push(['Failed hosts', m.run.failed_hosts.join(', ')]);
  }
  if (m.schedule) rows.push(['Schedule', m.schedule.name], ['Error', m.schedule.error]);
  const table = rows.map(([k, v]) => `<tr><th align="left">${html(k)}</th><td>${html(v)}</td></tr>`).join('');
  const link = m.run ? `<p><a href="${html(m.run.url)}">Open the run</a></p>` : '';
  return `<p>${html(m.summary)}</p>${table ? `<table>${table}</table>` : ''}${link}`;
}
