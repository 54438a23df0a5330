// Creating a notifier: its kind's settings, the events it hears, and optionally which templates' runs. A webhook's
// signing secret is shown once, right after.
import type { NotifierKind, NotifierWithSecret, NotifyEvent } from '@baton/contracts';
import { type FormEvent, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { useApiMutation } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { Field, FormError, SubmitRow } from '../../ui/forms';
import { PageHeader, SecretOnce } from '../../ui/layout';
import { NotAllowed } from '../../ui/NotAllowed';
import { EVENT_CHOICES, KIND_LABELS } from './events';

const lines = (s: string) =>
  s
    .split(/[\n,]/)
    .map((x) => x.trim())
    .filter(Boolean);

export default function NotifierNewPage() {
  const canCreate = useHasRole('operator');
  const [created, setCreated] = useState<NotifierWithSecret | null>(null);
  const [, navigate] = useLocation();
  if (!canCreate)
    return (
      <NotAllowed title="New notifier">
        Notifiers are created by operators and admins. <Link href="/notifiers">Back to notifications</Link>
      </NotAllowed>
    );
  if (created?.secret)
    return (
      <>
        <PageHeader title={`Notifier ${created.name} created`} subtitle="Give the receiver its signing secret." />
        <section className="form-section" aria-label="Signing secret">
          <SecretOnce
            label="Signing secret"
            value={created.secret}
            onDone={() => navigate(`/notifiers/${created.id}`)}
          />
          <p className="hint">
            Every delivery carries X-Baton-Signature-256: sha256=HMAC-SHA256(secret, body). It is never shown again.
          </p>
        </section>
        <Link href={`/notifiers/${created.id}`}>Go to the notifier</Link>
      </>
    );
  return <NotifierForm onCreated={(n) => (n.secret ? setCreated(n) : navigate(`/notifiers/${n.id}`))} />;
}

function NotifierForm({ onCreated }: { onCreated(n: NotifierWithSecret): void }) {
  const [name, setName] = useState('');
  const [kind, setKind] = useState<NotifierKind>('webhook');
  const [url, setUrl] = useState('');
  const [headers, setHeaders] = useState('');
  const [mail, setMail] = useState({
    host: '',
    port: '587',
    security: 'starttls',
    username: '',
    password: '',
    from: '',
    to: '',
  });
  const [events, setEvents] = useState<NotifyEvent[]>(['run.failed']);
  const [templates, setTemplates] = useState('');
  const create = useApiMutation<unknown, NotifierWithSecret>('POST', '/v1/notifiers', {
    invalidate: ['/v1/notifiers'],
    onSuccess: onCreated,
  });

  function config(): Record<string, unknown> {
    if (kind === 'webhook') {
      const pairs = headers
        .split('\n')
        .map((l) => l.split(':'))
        .filter((p) => p.length >= 2 && p[0]!.trim())
        .map((p) => [p[0]!.trim(), p.slice(1).join(':').trim()]);
      return { url, ...(pairs.length ? { headers: Object.fromEntries(pairs) } : {}) };
    }
    if (kind === 'slack') return { url };
    return {
      host: mail.host,
      port: Number(mail.port),
      security: mail.security,
      ...(mail.username ? { username: mail.username } : {}),
      ...(mail.password ? { password: mail.password } : {}),
      from: mail.from,
      to: lines(mail.to),
    };
  }

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    const tpl = lines(templates);
    create.mutate({ name, kind, config: config(), events, ...(tpl.length ? { match: { templates: tpl } } : {}) });
  }
  const error = create.error;
  const setMailField = (k: keyof typeof mail) => (e: { target: { value: string } }) =>
    setMail({ ...mail, [k]: e.target.value });
  return (
    <>
      <PageHeader title="New notifier" subtitle="Delivered at least once, retried for up to 24 hours." />
      <form onSubmit={onSubmit} noValidate aria-label="New notifier">
        <FormError error={error} fields={['name', 'kind', 'config', 'events', 'match']} />
        <Field label="Name" name="name" error={error}>
          {(p) => <input {...p} value={name} onChange={(e) => setName(e.target.value)} />}
        </Field>
        <Field label="Kind" name="kind" error={error}>
          {(p) => (
            <select {...p} value={kind} onChange={(e) => setKind(e.target.value as NotifierKind)}>
              {Object.entries(KIND_LABELS).map(([v, l]) => (
                <option key={v} value={v}>
                  {l}
                </option>
              ))}
            </select>
          )}
        </Field>
        {kind !== 'email' ? (
          <Field
            label={kind === 'slack' ? 'Incoming-webhook URL (kept secret)' : 'URL'}
            name="config.url"
            error={error}
            hint="http(s); private and loopback addresses only when the server allows them"
          >
            {(p) => <input {...p} type="url" value={url} onChange={(e) => setUrl(e.target.value)} />}
          </Field>
        ) : null}
        {kind === 'webhook' ? (
          <Field label="Extra headers (one “Name: value” a line; kept secret)" name="config.headers" error={error}>
            {(p) => <textarea {...p} rows={3} value={headers} onChange={(e) => setHeaders(e.target.value)} />}
          </Field>
        ) : null}
        {kind === 'email' ? (
          <>
            <Field label="SMTP host" name="config.host" error={error}>
              {(p) => <input {...p} value={mail.host} onChange={setMailField('host')} />}
            </Field>
            <Field label="Port" name="config.port" error={error}>
              {(p) => <input {...p} inputMode="numeric" value={mail.port} onChange={setMailField('port')} />}
            </Field>
            <Field label="Security" name="config.security" error={error}>
              {(p) => (
                <select {...p} value={mail.security} onChange={setMailField('security')}>
                  <option value="starttls">STARTTLS (required)</option>
                  <option value="tls">TLS from the start (port 465)</option>
                  <option value="none">None</option>
                </select>
              )}
            </Field>
            <Field label="Username" name="config.username" error={error}>
              {(p) => <input {...p} value={mail.username} onChange={setMailField('username')} autoComplete="off" />}
            </Field>
            <Field label="Password (kept secret)" name="config.password" error={error}>
              {(p) => (
                <input
                  {...p}
                  type="password"
                  value={mail.password}
                  onChange={setMailField('password')}
                  autoComplete="new-password"
                />
              )}
            </Field>
            <Field label="From" name="config.from" error={error}>
              {(p) => <input {...p} type="email" value={mail.from} onChange={setMailField('from')} />}
            </Field>
            <Field label="To (one address a line)" name="config.to" error={error}>
              {(p) => <textarea {...p} rows={2} value={mail.to} onChange={setMailField('to')} />}
            </Field>
          </>
        ) : null}
        <fieldset className="form-section">
          <legend>Events</legend>
          {EVENT_CHOICES.map((c) => (
            <label key={c.value} className="check-row">
              <input
                type="checkbox"
                checked={events.includes(c.value)}
                onChange={(e) =>
                  setEvents(e.target.checked ? [...events, c.value] : events.filter((x) => x !== c.value))
                }
              />{' '}
              <span className="mono">{c.value}</span>: {c.explain}
            </label>
          ))}
        </fieldset>
        <Field
          label="Only runs of these templates (ids, one a line; empty: every run you may see)"
          name="match.templates"
          error={error}
        >
          {(p) => <textarea {...p} rows={2} value={templates} onChange={(e) => setTemplates(e.target.value)} />}
        </Field>
        <SubmitRow>
          <button type="submit" className="btn btn-primary" disabled={create.isPending}>
            {create.isPending ? 'Creating…' : 'Create notifier'}
          </button>
          <Link href="/notifiers" className="btn">
            Cancel
          </Link>
        </SubmitRow>
      </form>
    </>
  );
}
