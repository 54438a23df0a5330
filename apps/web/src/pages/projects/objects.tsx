// Pickers and links for the objects the input pages refer to (projects, inventories, credentials).
import { Link } from 'wouter';
import { useApi, usePagedList } from '../../api/hooks';
import { asApiError, ErrorBanner, FormError } from '../../ui/forms';

/** The API collection and UI path of each kind of object an input can point at. */
export type ObjectKind = 'projects' | 'inventories' | 'credentials' | 'inventory-sources';

interface Named {
  id: string;
  name: string;
  type?: string;
}

/** A link to an object by its name (its id while the name loads, or when the caller cannot see it). */
export function ObjectLink({ kind, id }: { kind: ObjectKind; id: string | null | undefined }) {
  const q = useApi<Named>(id ? `/v1/${kind}/${id}` : null, { retry: false });
  if (!id) return <span className="muted">—</span>;
  if (q.error) return <code title="not visible to you">{id}</code>;
  return <Link href={`/${kind}/${id}`}>{q.data?.name ?? id}</Link>;
}

interface ObjectSelectProps {
  kind: ObjectKind;
  id: string;
  value: string;
  onChange(value: string): void;
  /** the text of the empty choice; without it a choice is required */
  noneLabel?: string;
  /** only credentials of these types */
  types?: readonly string[];
  'aria-invalid'?: boolean;
  'aria-describedby'?: string;
}

/** A select of the objects the caller can see, paged: more choices load on request. */
export function ObjectSelect({ kind, id, value, onChange, noneLabel, types, ...aria }: ObjectSelectProps) {
  const list = usePagedList<Named>(`/v1/${kind}?limit=200`);
  const choices = list.items.filter((o) => !types || (o.type !== undefined && types.includes(o.type)));
  const known = choices.some((o) => o.id === value);
  return (
    <div className="object-select">
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)} {...aria}>
        <option value="">{noneLabel ?? (list.isLoading ? 'Loading…' : 'Choose…')}</option>
        {value && !known ? <option value={value}>{value}</option> : null}
        {choices.map((o) => (
          <option key={o.id} value={o.id}>
            {o.name}
            {o.type ? ` (${o.type})` : ''}
          </option>
        ))}
      </select>
      {list.hasMore ? (
        <button type="button" className="btn btn-small" onClick={list.loadMore} disabled={list.loadingMore}>
          More choices
        </button>
      ) : null}
    </div>
  );
}

/** A failed delete: "in use" (409) says what uses the object and what to do; anything else as the API said it. */
export function DeleteError({ error }: { error: unknown }) {
  const api = asApiError(error);
  if (api?.status === 409)
    return (
      <ErrorBanner title="Not deleted: it is still in use">
        <p data-testid="in-use">{api.problem.detail}</p>
        <p>Change or delete what uses it first, then delete it again.</p>
      </ErrorBanner>
    );
  return <FormError error={error} />;
}
