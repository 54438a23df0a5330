// Page furniture shared by every page: header, empty states, loading, paged tables, copy buttons.
import { type ReactNode, useEffect, useState } from 'react';

export function PageHeader({
  title,
  subtitle,
  actions,
}: {
  title: ReactNode;
  subtitle?: ReactNode;
  actions?: ReactNode;
}) {
  useEffect(() => {
    if (typeof title === 'string') document.title = `${title} · Baton`;
  }, [title]);
  return (
    <header className="page-header">
      <div>
        <h1>{title}</h1>
        {subtitle ? <div className="page-subtitle">{subtitle}</div> : null}
      </div>
      {actions ? <div className="page-actions">{actions}</div> : null}
    </header>
  );
}

/** What an empty list says: what the thing is and what to do next. */
export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty" role="status">
      <strong>{title}</strong>
      {children ? <div>{children}</div> : null}
    </div>
  );
}

/** The empty list of a filtered view: says so and offers to clear every filter. */
export function NoMatches({ what, onClear }: { what: string; onClear(): void }) {
  return (
    <EmptyState title={`No ${what} match these filters`}>
      Change a filter above, or{' '}
      <button type="button" className="btn btn-small" onClick={onClear}>
        clear them all
      </button>
      .
    </EmptyState>
  );
}

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <div className="loading" role="status" aria-live="polite">
      {what}…
    </div>
  );
}

/** "Load more" for cursor-paged lists. */
export function LoadMore({ hasMore, loading, onClick }: { hasMore: boolean; loading: boolean; onClick(): void }) {
  if (!hasMore) return null;
  return (
    <div className="load-more">
      <button type="button" className="btn" onClick={onClick} disabled={loading}>
        {loading ? 'Loading…' : 'Load more'}
      </button>
    </div>
  );
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className="btn btn-small"
      onClick={() => {
        void navigator.clipboard?.writeText(text).then(
          () => setCopied(true),
          () => setCopied(false),
        );
      }}
    >
      {copied ? 'Copied' : label}
    </button>
  );
}

/** A secret the server shows once (trigger secret, API token): the value, a copy button and a warning. */
export function SecretOnce({ label, value, onDone }: { label: string; value: string; onDone?(): void }) {
  return (
    <div className="banner banner-warn secret-once" role="status">
      <strong>{label}</strong>
      <p>Copy it now: it is shown only this once and cannot be retrieved later.</p>
      <div className="secret-row">
        <code className="secret-value" data-testid="secret-value">
          {value}
        </code>
        <CopyButton text={value} />
      </div>
      {onDone ? (
        <button type="button" className="btn btn-small" onClick={onDone}>
          I have stored it
        </button>
      ) : null}
    </div>
  );
}

/** Key/value details of an object. */
export function Details({ items }: { items: Array<[string, ReactNode]> }) {
  return (
    <dl className="details">
      {items.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v ?? <span className="muted">—</span>}</dd>
        </div>
      ))}
    </dl>
  );
}
