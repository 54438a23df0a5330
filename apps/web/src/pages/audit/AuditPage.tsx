// The audit trail (admins): every change, hash-chained; filters, entry details, chain verification and export.
import type { AuditEntry } from '@baton/contracts';
import { type FormEvent, Fragment, useState } from 'react';
import { useSearchParams } from 'wouter';
import { api, qs } from '../../api/client';
import { usePagedList } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { SubjectName, SubjectPicker } from '../../ui/AccessPanel';
import { ErrorBanner, Field, FormError } from '../../ui/forms';
import { Details, EmptyState, PageHeader } from '../../ui/layout';
import { PagedTable } from '../../ui/PagedTable';
import { Time } from '../../ui/Time';
import { ObjectLink } from '../grants/objects';
import { downloadFromApi } from './download';
import './audit.css';

type VerifyResult = { ok: true; entries: number; head: string } | { ok: false; first_bad_seq: number; entries: number };

const FILTERS = ['actor', 'action', 'object', 'since', 'until'] as const;
type Filters = Record<(typeof FILTERS)[number], string>;

export default function AuditPage() {
  // The API decides (admins only); the controls are offered only to those it will answer.
  const isAdmin = useHasRole('admin');
  const [params, setParams] = useSearchParams();
  const filters = Object.fromEntries(FILTERS.map((f) => [f, params.get(f) ?? ''])) as Filters;
  const entries = usePagedList<AuditEntry>(`/v1/audit${qs({ ...filters, limit: 50 })}`);
  const [open, setOpen] = useState<number | null>(null);
  const filtered = FILTERS.some((f) => filters[f]);

  return (
    <>
      <PageHeader
        title="Audit trail"
        subtitle="Every change, newest first. Each entry's hash covers the one before it, so an edit anywhere breaks the chain."
        actions={isAdmin ? <ExportButton /> : null}
      />
      {isAdmin ? (
        <>
          <VerifyChain />
          <AuditFilters
            initial={filters}
            onApply={(next) => setParams(Object.fromEntries(Object.entries(next).filter(([, v]) => v)))}
          />
        </>
      ) : null}
      <PagedTable
        list={entries}
        what="Loading the audit trail"
        className="audit-table"
        empty={
          <EmptyState title={filtered ? 'No entries match these filters' : 'No entries yet'}>
            {filtered ? 'Widen the time range or clear a filter.' : 'Changes made through the API are recorded here.'}
          </EmptyState>
        }
        head={
          <>
            <th scope="col" className="num">
              #
            </th>
            <th scope="col">When</th>
            <th scope="col">Actor</th>
            <th scope="col">Action</th>
            <th scope="col">Object</th>
            <th scope="col">Summary</th>
          </>
        }
        row={(e) => (
          <Fragment key={e.seq}>
            <tr data-seq={e.seq}>
              <td className="num">
                <button
                  type="button"
                  className="btn btn-small"
                  aria-expanded={open === e.seq}
                  aria-controls={`audit-entry-${e.seq}`}
                  onClick={() => setOpen(open === e.seq ? null : e.seq)}
                  aria-label={`Entry ${e.seq} details`}
                >
                  {e.seq}
                </button>
              </td>
              <td>
                <Time at={e.at} />
              </td>
              <td>{e.actor.startsWith('usr_') ? <SubjectName id={e.actor} showKind={false} /> : e.actor}</td>
              <td>
                <code>{e.action}</code>
              </td>
              <td>{e.object ? <ObjectLink id={e.object} /> : <span className="muted">—</span>}</td>
              <td>{e.summary}</td>
            </tr>
            {open === e.seq ? (
              <tr id={`audit-entry-${e.seq}`} className="audit-detail">
                <td colSpan={6}>
                  <Details
                    items={[
                      ['Sequence', e.seq],
                      ['At', <Time key="at" at={e.at} />],
                      ['Actor', <code key="actor">{e.actor}</code>],
                      ['Action', <code key="action">{e.action}</code>],
                      ['Object', e.object ? <code key="obj">{e.object}</code> : null],
                      ['Summary', e.summary],
                      [
                        'Previous hash',
                        <code key="prev" className="hash">
                          {e.prev_hash}
                        </code>,
                      ],
                      [
                        'Hash',
                        <code key="hash" className="hash">
                          {e.hash}
                        </code>,
                      ],
                    ]}
                  />
                </td>
              </tr>
            ) : null}
          </Fragment>
        )}
      />
    </>
  );
}

function VerifyChain() {
  const [result, setResult] = useState<VerifyResult | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  async function verify() {
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      setResult(await api.get<VerifyResult>('/v1/audit/verify'));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  return (
    <section className="audit-verify" aria-label="Chain verification">
      <button type="button" className="btn" onClick={() => void verify()} disabled={busy}>
        {busy ? 'Verifying…' : 'Verify chain'}
      </button>
      <div aria-live="polite">
        {result?.ok ? (
          <div className="banner banner-info" role="status">
            <strong>
              <span aria-hidden="true">✓ </span>Chain intact
            </strong>
            <p>
              All {result.entries} entries check out. Head hash <code className="hash">{result.head}</code>
            </p>
          </div>
        ) : result ? (
          <ErrorBanner title="Chain broken">
            <p>
              Entry #{result.first_bad_seq} (of {result.entries}) does not match the hash chain: it or an entry before
              it was changed or removed outside Baton.
            </p>
          </ErrorBanner>
        ) : null}
      </div>
      <FormError error={error} />
    </section>
  );
}

function ExportButton() {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  return (
    <>
      <button
        type="button"
        className="btn"
        disabled={busy}
        onClick={() => {
          setBusy(true);
          setError(null);
          downloadFromApi('/v1/audit/export', 'baton-audit-export.json')
            .catch(setError)
            .finally(() => setBusy(false));
        }}
      >
        {busy ? 'Exporting…' : 'Export signed snapshot'}
      </button>
      {error ? <FormError error={error} /> : null}
    </>
  );
}

/** `datetime-local` shows local time without a zone; the API wants RFC 3339 with one. */
const toIso = (local: string) => (local ? new Date(local).toISOString() : '');
function toLocal(iso: string): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

function AuditFilters({ initial, onApply }: { initial: Filters; onApply(next: Filters): void }) {
  const [draft, setDraft] = useState<Filters>({
    ...initial,
    since: toLocal(initial.since),
    until: toLocal(initial.until),
  });
  const set = (k: keyof Filters) => (v: string) => setDraft({ ...draft, [k]: v });
  function submit(e: FormEvent) {
    e.preventDefault();
    onApply({
      ...draft,
      action: draft.action.trim(),
      object: draft.object.trim(),
      since: toIso(draft.since),
      until: toIso(draft.until),
    });
  }
  const clear = () => {
    const empty = { actor: '', action: '', object: '', since: '', until: '' };
    setDraft(empty);
    onApply(empty);
  };
  return (
    <form className="filters" onSubmit={submit} noValidate aria-label="Filter the audit trail">
      <Field label="Actor" name="actor">
        {(p) => <SubjectPicker kind="user" value={draft.actor} onChange={set('actor')} controlProps={p} anyLabel />}
      </Field>
      <Field label="Action" name="action" hint="e.g. grant.create">
        {(p) => <input {...p} className="mono" value={draft.action} onChange={(e) => set('action')(e.target.value)} />}
      </Field>
      <Field label="Object id" name="object">
        {(p) => (
          <input
            {...p}
            className="mono"
            placeholder="inv_…"
            value={draft.object}
            onChange={(e) => set('object')(e.target.value)}
          />
        )}
      </Field>
      <Field label="Since" name="since">
        {(p) => (
          <input {...p} type="datetime-local" value={draft.since} onChange={(e) => set('since')(e.target.value)} />
        )}
      </Field>
      <Field label="Until" name="until">
        {(p) => (
          <input {...p} type="datetime-local" value={draft.until} onChange={(e) => set('until')(e.target.value)} />
        )}
      </Field>
      <div className="form-actions">
        <button type="submit" className="btn btn-primary">
          Filter
        </button>
        <button type="button" className="btn" onClick={clear}>
          Clear
        </button>
      </div>
    </form>
  );
}
