// Personal API tokens: the caller's own (create, shown once; list with last use; revoke); admins also anyone's.
import { Badge, type Icon, type Tone } from '../../ui/Status';
import type { Token, TokenScope, TokenWithSecret } from '@baton/contracts';
import { type FormEvent, useState } from 'react';
import { useSearchParams } from 'wouter';
import { qs } from '../../api/client';
import { useApiMutation, usePagedList } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { SubjectName, SubjectPicker } from '../../ui/AccessPanel';
import { ConfirmButton } from '../../ui/Confirm';
import { Field, FormError, SubmitRow } from '../../ui/forms';
import { EmptyState, PageHeader, SecretOnce } from '../../ui/layout';
import { PagedTable } from '../../ui/PagedTable';
import { Time } from '../../ui/Time';

/** TOKEN_DEFAULT_DAYS and TOKEN_MAX_DAYS of the contracts (a value import would bring zod into the bundle). */
const DEFAULT_DAYS = 90;
const MAX_DAYS = 3650;

const STATUS_LOOK: Record<Token['status'], { icon: Icon; label: string; tone: Tone }> = {
  active: { icon: 'check', label: 'Active', tone: 'ok' },
  expired: { icon: 'slash', label: 'Expired', tone: 'muted' },
  owner_demoted: { icon: 'bang', label: 'Refused: owner demoted', tone: 'warn' },
};

function TokenStatus({ status }: { status: Token['status'] }) {
  const look = STATUS_LOOK[status];
  return <Badge tone={look.tone} icon={look.icon} label={look.label} data={{ status: status }} />;
}

export default function TokensPage() {
  const isAdmin = useHasRole('admin');
  const [params, setParams] = useSearchParams();
  // Admins: `?user=usr_…` or `?all=true`; everyone else: their own.
  const user = isAdmin ? (params.get('user') ?? '') : '';
  const all = isAdmin && params.get('all') === 'true';
  const [whose, setWhose] = useState<'mine' | 'all' | 'user'>(all ? 'all' : user ? 'user' : 'mine');
  const [created, setCreated] = useState<TokenWithSecret | null>(null);
  const tokens = usePagedList<Token>(
    whose === 'user' && !user ? null : `/v1/tokens${qs({ limit: 50, user, all: all ? 'true' : undefined })}`,
  );
  const revoke = useApiMutation<string, void>('DELETE', (id) => `/v1/tokens/${id}`, { invalidate: ['/v1/tokens'] });

  return (
    <>
      <PageHeader
        title="API tokens"
        subtitle="Personal tokens for scripts and CI: they act as their owner, within their scope, until they expire or are revoked."
      />
      {isAdmin ? (
        <div className="filters" role="group" aria-label="Whose tokens">
          <Field label="Whose tokens" name="whose">
            {(p) => (
              <select
                {...p}
                value={whose}
                onChange={(e) => {
                  const v = e.target.value as typeof whose;
                  setWhose(v);
                  setParams(v === 'all' ? { all: 'true' } : {});
                }}
              >
                <option value="mine">Mine</option>
                <option value="all">Everyone&apos;s</option>
                <option value="user">One user&apos;s</option>
              </select>
            )}
          </Field>
          {whose === 'user' ? (
            <Field label="User" name="user">
              {(p) => (
                <SubjectPicker
                  kind="user"
                  value={user}
                  onChange={(id) => setParams(id ? { user: id } : {})}
                  controlProps={p}
                />
              )}
            </Field>
          ) : null}
        </div>
      ) : null}
      {created ? (
        <SecretOnce label={`Token ${created.name}`} value={created.token} onDone={() => setCreated(null)} />
      ) : null}
      {whose === 'mine' ? <CreateToken onCreated={setCreated} /> : null}
      <h2>{whose === 'mine' ? 'Your tokens' : whose === 'all' ? 'Everyone’s tokens' : 'Their tokens'}</h2>
      <PagedTable
        list={tokens}
        what="Loading tokens"
        empty={
          <EmptyState title="No API tokens">
            {whose === 'mine'
              ? 'Create one above for a script or a CI job; sign-in sessions are not listed here.'
              : whose === 'user' && !user
                ? 'Choose a user to see their tokens.'
                : 'Nobody here has a personal token.'}
          </EmptyState>
        }
        head={
          <>
            <th scope="col">Name</th>
            {whose !== 'mine' ? <th scope="col">Owner</th> : null}
            <th scope="col">Scope</th>
            <th scope="col">Status</th>
            <th scope="col">Last used</th>
            <th scope="col">Expires</th>
            <th scope="col">Created</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </>
        }
        row={(t) => (
          <tr key={t.id} data-token={t.id}>
            <td>{t.name}</td>
            {whose !== 'mine' ? (
              <td>
                <SubjectName id={t.user_id} showKind={false} />
              </td>
            ) : null}
            <td>{t.scope}</td>
            <td>
              <TokenStatus status={t.status} />
            </td>
            <td>
              <Time at={t.last_used_at} empty="never" />
            </td>
            <td>
              <Time at={t.expires_at} />
            </td>
            <td>
              <Time at={t.created_at} />
            </td>
            <td>
              <ConfirmButton
                question={`Revoke the token ${t.name}?`}
                detail={<p>Anything using it gets 401 from now on. This cannot be undone.</p>}
                confirmLabel="Revoke"
                onConfirm={() => revoke.mutate(t.id)}
                disabled={revoke.isPending}
              >
                Revoke
              </ConfirmButton>
            </td>
          </tr>
        )}
      />
      <FormError error={revoke.error} />
    </>
  );
}

interface CreateBody {
  name: string;
  scope: TokenScope;
  /** a number, or what was typed when it is not one (the API then says what is wrong, next to the field) */
  expires_in_days: number | string;
}

function CreateToken({ onCreated }: { onCreated(token: TokenWithSecret): void }) {
  const [name, setName] = useState('');
  const [scope, setScope] = useState<TokenScope>('read');
  const [days, setDays] = useState(String(DEFAULT_DAYS));
  const create = useApiMutation<CreateBody, TokenWithSecret>('POST', '/v1/tokens', {
    invalidate: ['/v1/tokens'],
    onSuccess: (token) => {
      setName('');
      onCreated(token);
    },
  });
  function submit(e: FormEvent) {
    e.preventDefault();
    const n = Number(days);
    create.mutate({ name, scope, expires_in_days: days.trim() === '' || Number.isNaN(n) ? days : n });
  }
  return (
    <form className="card" onSubmit={submit} noValidate aria-label="New token">
      <h2>New token</h2>
      <div className="filters">
        <Field label="Name" name="name" error={create.error} hint="What it is for, e.g. ci-deploy">
          {(p) => <input {...p} value={name} onChange={(e) => setName(e.target.value)} />}
        </Field>
        <Field label="Scope" name="scope" error={create.error}>
          {(p) => (
            <select {...p} value={scope} onChange={(e) => setScope(e.target.value as TokenScope)}>
              <option value="read">read — looks only; every change is refused</option>
              <option value="write">write — may do what you may do</option>
            </select>
          )}
        </Field>
        <Field label="Expires in (days)" name="expires_in_days" error={create.error} hint={`1 to ${MAX_DAYS}`}>
          {(p) => (
            <input
              {...p}
              type="number"
              min={1}
              max={MAX_DAYS}
              inputMode="numeric"
              value={days}
              onChange={(e) => setDays(e.target.value)}
            />
          )}
        </Field>
      </div>
      <FormError error={create.error} fields={['name', 'scope', 'expires_in_days']} />
      <SubmitRow>
        <button type="submit" className="btn btn-primary" disabled={create.isPending}>
          Create token
        </button>
      </SubmitRow>
    </form>
  );
}
